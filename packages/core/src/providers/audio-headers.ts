/**
 * The length a compressed audio file's headers declare, read without decoding: an MP3's Xing,
 * Info or VBRI frame count (or, without one, its byte length at the first frame's bitrate), a
 * FLAC's STREAMINFO sample count, an Ogg Opus or Vorbis stream's last granule position, an MP4 or
 * M4A's `mvhd` duration. Every read is of a few fixed places in the file (the Ogg end page is
 * searched for in the last 64 KiB with Buffer's native search), so it costs microseconds whatever
 * the bytes are.
 *
 * Why not music-metadata, which the speech route uses on answers it bounds by size: on an upload,
 * a valid MP3 frame header followed by 4 MB of 0xff bytes kept it busy 16–22 s on the event loop
 * (measured), and an unpaid x402 request is quoted from its file.
 *
 * A header is what the file says, not what a decoder will play: a forged one can declare anything.
 * The caller ({@link audioSeconds}) uses it only to raise the byte-length estimate, never to lower
 * it, and caps it at what the bytes can hold.
 */

/** Seconds the headers of `bytes` declare (see the module), or undefined when none is read. */
export function declaredAudioSeconds(bytes: Uint8Array): number | undefined {
  const seconds = flacSeconds(bytes) ?? oggSeconds(bytes) ?? mp4Seconds(bytes) ?? mp3Seconds(bytes);
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
const ascii = (b: Uint8Array, at: number, text: string) => at >= 0 && at + text.length <= b.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

/** FLAC: the STREAMINFO block (always first) holds the sample rate and the total samples. */
function flacSeconds(b: Uint8Array): number | undefined {
  if (!ascii(b, 0, "fLaC") || b.length < 26 || (b[4]! & 0x7f) !== 0) return undefined;
  const d = 8; // STREAMINFO data: 10 bytes of block and frame sizes, then rate (20 bits), channels, depth, samples (36 bits)
  const rate = (b[d + 10]! << 12) | (b[d + 11]! << 4) | (b[d + 12]! >> 4);
  const samples = (b[d + 13]! & 0x0f) * 2 ** 32 + view(b).getUint32(d + 14);
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** The longest an Ogg page can be (27 + 255 lacing bytes + 255 × 255 of data). */
const MAX_OGG_PAGE = 65_307;

/** Ogg Opus or Vorbis: the granule position of the last page counts samples (Opus at 48 kHz, less its pre-skip). */
function oggSeconds(b: Uint8Array): number | undefined {
  if (!ascii(b, 0, "OggS") || b.length < 28) return undefined;
  const packet = 27 + b[26]!;
  let rate: number;
  let skip = 0;
  if (ascii(b, packet, "OpusHead") && packet + 12 <= b.length) {
    rate = 48_000;
    skip = view(b).getUint16(packet + 10, true);
  } else if (ascii(b, packet, "\x01vorbis") && packet + 16 <= b.length) rate = view(b).getUint32(packet + 12, true);
  else return undefined;
  const tail = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const last = tail.lastIndexOf("OggS", b.length - 1, "latin1");
  if (last < 0 || last < b.length - MAX_OGG_PAGE || last + 14 > b.length) return undefined;
  const lo = view(b).getUint32(last + 6, true);
  const hi = view(b).getUint32(last + 10, true);
  if (hi === 0xffffffff) return undefined; // -1: no packet ends on that page
  const samples = hi * 2 ** 32 + lo - skip;
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** MP4 / M4A: the movie header (`moov` → `mvhd`) holds a timescale and a duration in it. */
function mp4Seconds(b: Uint8Array): number | undefined {
  if (!ascii(b, 4, "ftyp")) return undefined;
  const moov = box(b, 0, b.length, "moov");
  const mvhd = moov && box(b, moov.start, moov.end, "mvhd");
  if (!mvhd || mvhd.end - mvhd.start < 32) return undefined;
  const v = view(b);
  const d = mvhd.start;
  const [scale, duration] =
    b[d] === 1 ? [v.getUint32(d + 20), v.getUint32(d + 24) * 2 ** 32 + v.getUint32(d + 28)] : [v.getUint32(d + 12), v.getUint32(d + 16)];
  return scale > 0 && duration > 0 && duration !== 0xffffffff ? duration / scale : undefined;
}

/** The first box of `type` among those between `from` and `to` (at most 64 looked at): where its data starts and ends. */
function box(b: Uint8Array, from: number, to: number, type: string): { start: number; end: number } | undefined {
  const v = view(b);
  let at = from;
  for (let i = 0; i < 64 && at + 8 <= to; i++) {
    let size = v.getUint32(at);
    let header = 8;
    if (size === 1 && at + 16 <= to) {
      size = v.getUint32(at + 8) * 2 ** 32 + v.getUint32(at + 12);
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) return undefined;
    if (ascii(b, at + 4, type)) return { start: at + header, end: at + size };
    at += size;
  }
  return undefined;
}

/** kbit/s by bitrate index: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I, and layers II and III. */
const BITRATES = [
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
] as const;
/** Hz by sample-rate index, for MPEG-1, MPEG-2 and MPEG-2.5. */
const RATES = { 3: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 0: [11_025, 12_000, 8_000] } as Record<number, readonly number[]>;

/**
 * MP3 (any MPEG audio layer): after any ID3v2 tags, the first frame header must follow at once.
 * Its Xing/Info (or VBRI) tag counts the frames; without one, the bytes from that frame on at its
 * bitrate (right for constant-bitrate files).
 */
function mp3Seconds(b: Uint8Array): number | undefined {
  let at = 0;
  for (let tags = 0; tags < 4 && ascii(b, at, "ID3") && at + 10 <= b.length; tags++)
    at += 10 + (b[at + 5]! & 0x10 ? 10 : 0) + (((b[at + 6]! & 0x7f) << 21) | ((b[at + 7]! & 0x7f) << 14) | ((b[at + 8]! & 0x7f) << 7) | (b[at + 9]! & 0x7f));
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1]! >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layer = 4 - ((b[at + 1]! >> 1) & 3); // 1, 2 or 3 (4: reserved)
  const rate = RATES[version]?.[(b[at + 2]! >> 2) & 3];
  const kbps = BITRATES[version === 3 ? layer - 1 : layer === 1 ? 3 : 4]?.[b[at + 2]! >> 4];
  if (layer > 3 || rate === undefined || !kbps) return undefined;
  const perFrame = layer === 1 ? 384 : layer === 3 && version !== 3 ? 576 : 1152;
  const mono = b[at + 3]! >> 6 === 3;
  const side = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const xing = at + 4 + ((b[at + 1]! & 1) === 0 ? 2 : 0) + side;
  const v = view(b);
  if ((ascii(b, xing, "Xing") || ascii(b, xing, "Info")) && xing + 12 <= b.length && v.getUint32(xing + 4) & 1)
    return (v.getUint32(xing + 8) * perFrame) / rate;
  if (ascii(b, at + 36, "VBRI") && at + 54 <= b.length) return (v.getUint32(at + 50) * perFrame) / rate;
  return ((b.length - at) * 8) / (kbps * 1000);
}
