/**
 * RIFF/WAVE writing and reading for the provider layer: 16-bit PCM output with optional extra
 * chunks, and a header reader that yields the duration billing needs.
 */
import { concatBytes, hasAscii } from "./bytes.js";
import { declaredAudioSeconds } from "./audio-headers.js";

/** One RIFF chunk to write after `data`, e.g. `{ id: "tgtx", data: utf8 }`. `id` is 4 ASCII characters. */
export interface RiffChunk {
  id: string;
  data: Uint8Array;
}

/** The fields of a WAV file the gateway uses. */
export interface WavInfo {
  /** 1 = integer PCM, 3 = float, 0xfffe = extensible, … */
  audioFormat: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Bytes per second, from the `fmt ` chunk. */
  byteRate: number;
  /** Bytes of the `data` chunk actually present in the file. */
  dataBytes: number;
  /** Offset of the sample bytes. */
  dataOffset: number;
  /**
   * Seconds of audio. For sample formats (integer or float PCM, A-law, µ-law, extensible) the
   * frames in `data` over the sample rate, as a decoder plays them, with the frame size taken from
   * the channels and bits per sample; the header's `byteRate` and `blockAlign` are not trusted
   * (a file could declare a huge byte rate to be billed for a fraction of its length), and only the
   * first `fmt ` chunk counts. Null for other codecs, whose length the header alone does not give
   * (an extensible header whose sub-format is not PCM or float, or whose valid bits are not its
   * width, counts as one, and so does integer PCM with an IEC 61937 burst preamble in the 64 KiB
   * from the start of its `data`, which FFmpeg decodes as the AC-3 or MP3 it carries); for a sample width
   * its format does not have (A-law and µ-law are 8 bits; PCM 8 to 32; float 32 or 64); for a sample
   * rate above 768 kHz or more than 64 channels; and for a file with a second `data` chunk (some
   * decoders play the last one).
   */
  durationSeconds: number | null;
  /** Every chunk other than `fmt ` and `data`, by id (the first of each id). */
  chunks: Map<string, Uint8Array>;
}

/**
 * Encodes mono or interleaved 16-bit little-endian PCM as a WAV file; `extra` chunks follow the
 * `data` chunk (readers skip unknown chunks), each padded to an even length as RIFF requires.
 */
export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1, extra: readonly RiffChunk[] = []): Uint8Array {
  const dataBytes = samples.length * 2;
  const header = new Uint8Array(44);
  const v = new DataView(header.buffer);
  const extras = extra.map((c) => riffChunk(c.id, c.data));
  const extraBytes = extras.reduce((n, c) => n + c.length, 0);
  const pad = dataBytes % 2;
  writeAscii(header, 0, "RIFF");
  v.setUint32(4, 36 + dataBytes + pad + extraBytes, true);
  writeAscii(header, 8, "WAVE");
  writeAscii(header, 12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  writeAscii(header, 36, "data");
  v.setUint32(40, dataBytes, true);
  return concatBytes([header, pcmBytes(samples), new Uint8Array(pad), ...extras]);
}

/** Raw 16-bit little-endian PCM bytes of `samples` (OpenAI's `pcm` response format). */
export function pcmBytes(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const v = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) v.setInt16(i * 2, samples[i]!, true);
  return out;
}

/**
 * Reads a WAV file's header; null when `bytes` is not a RIFF/WAVE file with a usable `fmt ` chunk
 * (byte rate > 0) and a `data` chunk. A `data` size larger than the file (a streamed WAV with a
 * placeholder size) is clamped to the bytes present.
 */
export function parseWav(bytes: Uint8Array): WavInfo | null {
  if (bytes.length < 12 || !hasAscii(bytes, 0, "RIFF") || !hasAscii(bytes, 8, "WAVE")) return null;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks = new Map<string, Uint8Array>();
  let fmt: Omit<WavInfo, "dataBytes" | "dataOffset" | "durationSeconds" | "chunks"> | undefined;
  let data: { offset: number; size: number } | undefined;
  let dataChunks = 0;
  let subFormat: number | undefined;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
    const declared = v.getUint32(at + 4, true);
    const body = at + 8;
    const size = Math.min(declared, bytes.length - body);
    if (id === "fmt " && fmt === undefined) {
      // The first `fmt ` counts, as decoders read it; a later one cannot change what is billed.
      if (size < 16) return null;
      fmt = {
        audioFormat: v.getUint16(body, true),
        channels: v.getUint16(body + 2, true),
        sampleRate: v.getUint32(body + 4, true),
        byteRate: v.getUint32(body + 8, true),
        bitsPerSample: v.getUint16(body + 14, true),
      };
      // Extensible: the sub-format GUID names the coding; decoders size samples by the valid bits, so they must be the width (or 0).
      if (fmt.audioFormat === 0xfffe) {
        const valid = size >= 40 ? v.getUint16(body + 18, true) : -1;
        subFormat = (valid === 0 || valid === fmt.bitsPerSample) && hasBytes(bytes, body + 26, GUID_TAIL) ? v.getUint16(body + 24, true) : 0;
      }
    } else if (id === "fmt ") {
      // a second `fmt `: ignored
    } else if (id === "data") {
      data ??= { offset: body, size };
      dataChunks++;
    } else if (!chunks.has(id)) {
      chunks.set(id, bytes.subarray(body, body + size));
    }
    if (declared > bytes.length - body) break;
    at = body + declared + (declared % 2);
  }
  if (!fmt || !data || fmt.byteRate === 0 || fmt.channels === 0 || fmt.sampleRate === 0) return null;
  const widths = SAMPLE_WIDTHS[subFormat ?? fmt.audioFormat];
  const plausible =
    fmt.sampleRate <= MAX_SAMPLE_RATE && fmt.channels <= MAX_CHANNELS && dataChunks === 1 && widths !== undefined && widths.includes(fmt.bitsPerSample);
  // FFmpeg probes integer PCM for an IEC 61937 (S/PDIF) stream and decodes the AC-3 or MP3 inside at its own rate.
  // It reads those bytes from the start of `data` whatever the chunk's size, and then the bursts to the end of the file.
  const coded = (subFormat ?? fmt.audioFormat) === 1 && hasSpdifSync(bytes.subarray(data.offset, data.offset + SPDIF_PROBE_BYTES));
  const frameBytes = plausible && !coded ? fmt.channels * Math.ceil(fmt.bitsPerSample / 8) : 0;
  const durationSeconds = frameBytes > 0 ? Math.floor(data.size / frameBytes) / fmt.sampleRate : null;
  return Object.assign({}, fmt, { dataBytes: data.size, dataOffset: data.offset, durationSeconds, chunks });
}

/** The most a real recording has (768 kHz and 64 channels); a header beyond them gives no exact length. */
const MAX_SAMPLE_RATE = 768_000;
const MAX_CHANNELS = 64;

/** WAVE format tags whose `data` is plain sample frames (PCM, IEEE float, A-law, µ-law), with the sample widths each has. */
const SAMPLE_WIDTHS: Readonly<Record<number, readonly number[]>> = { 1: [8, 12, 16, 20, 24, 32], 3: [32, 64], 6: [8], 7: [8] };

/** Bytes 2..15 of the KSDATAFORMAT_SUBTYPE GUIDs of an extensible header (`xxxx0000-0000-0010-8000-00aa00389b71`); bytes 0..1 are the format tag. */
const GUID_TAIL = [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71];

/** How much of a PCM `data` chunk FFmpeg's WAV reader probes for an IEC 61937 stream. */
const SPDIF_PROBE_BYTES = 65_536;
/** The IEC 61937 burst preamble Pa Pb (0xF872 0x4E1F) as 16-bit little- and big-endian words. */
const SPDIF_SYNC = [Buffer.from([0x72, 0xf8, 0x1f, 0x4e]), Buffer.from([0xf8, 0x72, 0x4e, 0x1f])];

/** Whether `head` holds {@link SPDIF_SYNC} (Buffer's native search: ~15 µs for 64 KiB where a JavaScript loop took ~130, measured with a 1.9 MB WAV). */
function hasSpdifSync(head: Uint8Array): boolean {
  const view = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  return SPDIF_SYNC.some((sync) => view.includes(sync));
}

function hasBytes(bytes: Uint8Array, at: number, expected: readonly number[]): boolean {
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** Assumed bitrate of the byte-length estimate of {@link audioSeconds}: 128 kbit/s. */
export const ESTIMATE_BITS_PER_SECOND = 128_000;

/**
 * The bitrate a file's bound assumes: 6 kbit/s, Opus's lowest for wideband speech (voice notes run
 * at 12 to 32 kbit/s). Audio coded lower still (Opus down to 0.5 kbit/s, silence in FLAC) runs past
 * the bound.
 */
export const MIN_AUDIO_BITS_PER_SECOND = 6_000;

/**
 * The length of an audio file in seconds: exact for a WAV of sample frames (see
 * {@link WavInfo.durationSeconds}); otherwise an ESTIMATE: the byte length at
 * {@link ESTIMATE_BITS_PER_SECOND} (right for 128 kbit/s CBR MP3), or the length the file's headers
 * declare when that is longer ({@link declaredAudioSeconds}: an MP3, FLAC, Ogg or MP4 coded below
 * 128 kbit/s), at most the byte length at {@link MIN_AUDIO_BITS_PER_SECOND}. A header never lowers
 * the estimate: a forged one could then buy a long file at a short file's price. Never below 0.
 */
export function audioSeconds(bytes: Uint8Array): { seconds: number; estimated: boolean } {
  const seconds = parseWav(bytes)?.durationSeconds;
  if (seconds !== undefined && seconds !== null) return { seconds, estimated: false };
  const bits = bytes.length * 8;
  const declared = Math.min(declaredAudioSeconds(bytes) ?? 0, bits / MIN_AUDIO_BITS_PER_SECOND);
  return { seconds: Math.max(bits / ESTIMATE_BITS_PER_SECOND, declared), estimated: true };
}

function riffChunk(id: string, data: Uint8Array): Uint8Array {
  if (!/^[\x20-\x7e]{4}$/.test(id)) throw new RangeError(`bad RIFF chunk id ${JSON.stringify(id)}`);
  const out = new Uint8Array(8 + data.length + (data.length % 2));
  writeAscii(out, 0, id);
  new DataView(out.buffer).setUint32(4, data.length, true);
  out.set(data, 8);
  return out;
}

function writeAscii(out: Uint8Array, at: number, text: string): void {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
}
