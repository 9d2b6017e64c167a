import { crc32 as nodeCrc32, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { GatewayError } from "../errors.js";
import { base64ToFloat32 } from "./bytes.js";
import { createLocalProvider } from "./local.js";
import { createProviderRegistry } from "./registry.js";
import type { ImageResult } from "./types.js";
import { encodeWav, parseWav } from "./wav.js";

const local = createLocalProvider();

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot; // both are unit vectors
}

async function rejection(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
}

async function vectors(input: string | string[], dimensions?: number): Promise<number[][]> {
  const r = await local.embeddings!({ model: "local-embed", input, ...(dimensions ? { dimensions } : {}) });
  return r.data as number[][];
}

/** Splits a PNG into chunks, checking each chunk's CRC with node's zlib. */
function pngChunks(png: Uint8Array): { type: string; data: Uint8Array }[] {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: { type: string; data: Uint8Array }[] = [];
  for (let at = 8; at < png.length;) {
    const len = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + len);
    expect(view.getUint32(at + 8 + len), `CRC of ${type}`).toBe(nodeCrc32(png.subarray(at + 4, at + 8 + len)));
    chunks.push({ type, data });
    at += 12 + len;
  }
  return chunks;
}

function decodePng(b64: string): { width: number; height: number; raw: Buffer; types: string[] } {
  const png = new Uint8Array(Buffer.from(b64, "base64"));
  const chunks = pngChunks(png);
  expect(chunks.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"]);
  const ihdr = new DataView(chunks[0]!.data.buffer, chunks[0]!.data.byteOffset, 13);
  expect([chunks[0]!.data[8], chunks[0]!.data[9], chunks[0]!.data[12]]).toEqual([8, 2, 0]); // 8-bit RGB, no interlace
  return { width: ihdr.getUint32(0), height: ihdr.getUint32(4), raw: inflateSync(chunks[1]!.data), types: chunks.map((c) => c.type) };
}

const b64 = (r: ImageResult, i = 0) => (r.data[i] as { b64_json: string }).b64_json;

describe("local provider: embeddings", () => {
  it("is deterministic, 1536-dimensional by default, and unit length", async () => {
    const [a] = await vectors("Hello world");
    const [b] = await vectors("hello, WORLD!");
    expect(a).toHaveLength(1536);
    expect(a).toEqual(b); // same words after lower-casing and tokenising
    expect(cosine(a!, a!)).toBeCloseTo(1, 10);
  });

  it("ranks texts sharing words above unrelated texts", async () => {
    const [q, near, far] = await vectors(["the cat sat on the mat", "a cat sat on a mat", "quantum chromodynamics lattice gauge theory"]);
    expect(cosine(q!, near!)).toBeGreaterThan(0.4);
    expect(cosine(q!, near!)).toBeGreaterThan(cosine(q!, far!) + 0.4);
  });

  it("honours dimensions and validates 1..8192", async () => {
    expect((await vectors("x", 8))[0]).toHaveLength(8);
    expect((await vectors("x", 8192))[0]).toHaveLength(8192);
    for (const dimensions of [0, 8193, 1.5]) {
      const e = await rejection(local.embeddings!({ model: "m", input: "x", dimensions }));
      expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", "dimensions"]);
    }
  });

  it("counts words as tokens and answers base64 float32 little-endian like OpenAI", async () => {
    const floats = await local.embeddings!({ model: "m", input: ["one two three", "four"], dimensions: 64 });
    expect(floats.usage).toEqual({ promptTokens: 4, totalTokens: 4 });
    const b = await local.embeddings!({ model: "m", input: ["one two three", "four"], dimensions: 64, encodingFormat: "base64" });
    const decoded = (b.data as string[]).map((s) => base64ToFloat32(s)!);
    expect(decoded[0]).toHaveLength(64);
    decoded.forEach((v, i) => v.forEach((x, j) => expect(x).toBeCloseTo((floats.data as number[][])[i]![j]!, 6)));
    expect(Buffer.from((b.data as string[])[1]!, "base64").readFloatLE(0)).toBeCloseTo((floats.data as number[][])[1]![0]!, 6);
  });

  it("rejects an empty batch and empty strings", async () => {
    expect((await rejection(local.embeddings!({ model: "m", input: [] }))).param).toBe("input");
    expect((await rejection(local.embeddings!({ model: "m", input: ["ok", ""] }))).param).toBe("input");
  });
});

describe("local provider: images", () => {
  it("writes a valid PNG of the requested size whose IDAT inflates to height × (1 + width × 3)", async () => {
    const r = await local.generateImages!({ model: "local-image", prompt: "a red fox", n: 1, size: "64x32" });
    const { width, height, raw } = decodePng(b64(r));
    expect([width, height]).toEqual([64, 32]);
    expect(raw.length).toBe(32 * (1 + 64 * 3));
    for (let y = 0; y < 32; y++) expect(raw[y * (1 + 64 * 3)]).toBe(0); // filter byte None
    expect(r.created).toBeTypeOf("number");
  });

  it("defaults to 1024x1024 and accepts the 2048x2048 maximum", async () => {
    const r = await local.generateImages!({ model: "m", prompt: "p", n: 1 });
    expect(decodePng(b64(r))).toMatchObject({ width: 1024, height: 1024 });
    const big = decodePng(b64(await local.generateImages!({ model: "m", prompt: "p", n: 1, size: "2048x2048" })));
    expect(big.raw.length).toBe(2048 * (1 + 2048 * 3)); // spans many 64 KiB stored blocks
  });

  it("is deterministic per prompt and index, and differs across prompts", async () => {
    const a = await local.generateImages!({ model: "m", prompt: "sunset", n: 2, size: "16x16" });
    const b = await local.generateImages!({ model: "m", prompt: "sunset", n: 2, size: "16x16" });
    const c = await local.generateImages!({ model: "m", prompt: "sunrise", n: 1, size: "16x16" });
    expect(a.data).toEqual(b.data);
    expect(b64(a, 0)).not.toBe(b64(a, 1));
    expect(b64(a, 0)).not.toBe(b64(c, 0));
  });

  it("answers data: URLs for responseFormat url", async () => {
    const r = await local.generateImages!({ model: "m", prompt: "p", n: 1, size: "8x8", responseFormat: "url" });
    const url = (r.data[0] as { url: string }).url;
    expect(url.startsWith("data:image/png;base64,")).toBe(true);
    expect(decodePng(url.slice("data:image/png;base64,".length))).toMatchObject({ width: 8, height: 8 });
  });

  it("rejects a malformed or oversized size and a bad n with 400", async () => {
    for (const size of ["big", "1024", "0x10", "10x", "2049x10", "4096x4096"]) {
      const e = await rejection(local.generateImages!({ model: "m", prompt: "p", n: 1, size }));
      expect([e.status, e.param]).toEqual([400, "size"]);
    }
    expect((await rejection(local.generateImages!({ model: "m", prompt: "p", n: 0 }))).param).toBe("n");
  });

  it("edits derive the output from the prompt and the input bytes, at the requested size", async () => {
    const edit = (image: Uint8Array, prompt = "add a hat") => local.editImages!({ model: "m", prompt, image, n: 1, size: "32x16" });
    const one = await edit(new Uint8Array([1, 2, 3]));
    expect(decodePng(b64(one))).toMatchObject({ width: 32, height: 16 });
    expect(b64(await edit(new Uint8Array([1, 2, 3])))).toBe(b64(one));
    expect(b64(await edit(new Uint8Array([1, 2, 4])))).not.toBe(b64(one));
    expect(b64(await edit(new Uint8Array([1, 2, 3]), "add a scarf"))).not.toBe(b64(one));
    expect((await rejection(edit(new Uint8Array(0)))).param).toBe("image");
  });
});

describe("local provider: speech and transcription", () => {
  it("writes a 16-bit PCM mono 24 kHz WAV, 60 ms per character", async () => {
    const r = await local.speech!({ model: "local-tts", input: "hello" });
    expect(r.contentType).toBe("audio/wav");
    expect(r.characters).toBe(5);
    const buf = Buffer.from(r.audio);
    expect(buf.toString("ascii", 0, 4)).toBe("RIFF");
    expect(buf.readUInt32LE(4)).toBe(buf.length - 8);
    expect(buf.toString("ascii", 8, 16)).toBe("WAVEfmt ");
    expect([
      buf.readUInt32LE(16),
      buf.readUInt16LE(20),
      buf.readUInt16LE(22),
      buf.readUInt32LE(24),
      buf.readUInt32LE(28),
      buf.readUInt16LE(32),
      buf.readUInt16LE(34),
    ]).toEqual([16, 1, 1, 24_000, 48_000, 2, 16]);
    expect(buf.toString("ascii", 36, 40)).toBe("data");
    expect(buf.readUInt32LE(40)).toBe(5 * 1440 * 2);
    expect(parseWav(r.audio)!.durationSeconds).toBeCloseTo(0.3, 10);
    expect(buf.readInt16LE(44 + 2 * 720)).not.toBe(0); // a tone, not silence
  });

  it("transcribes its own WAV back to the exact text, with the duration from the header", async () => {
    const input = "Grüße, 世界! 🌍 Tollgate speaks.";
    const r = await local.speech!({ model: "m", input, speed: 2 });
    expect(r.characters).toBe(Array.from(input).length);
    const t = await local.transcribe!({ model: "local-stt", file: r.audio });
    expect(t.text).toBe(input);
    expect(t.durationSeconds).toBeCloseTo(Array.from(input).length * 0.03, 6);
  });

  it("caps speech at 30 seconds", async () => {
    const r = await local.speech!({ model: "m", input: "a".repeat(2000) });
    expect(parseWav(r.audio)!.durationSeconds).toBeCloseTo(30, 6);
    expect((await local.transcribe!({ model: "m", file: r.audio })).text).toBe("a".repeat(2000));
  });

  it("answers raw pcm, and 400 response_format for other formats", async () => {
    const r = await local.speech!({ model: "m", input: "hi", responseFormat: "pcm" });
    expect([r.contentType, r.audio.length]).toEqual(["audio/pcm", 2 * 1440 * 2]);
    for (const responseFormat of ["mp3", "opus", "aac", "flac"] as const) {
      const e = await rejection(local.speech!({ model: "m", input: "hi", responseFormat }));
      expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", "response_format"]);
      expect(e.message).toMatch(/wav or pcm/);
    }
    expect((await rejection(local.speech!({ model: "m", input: "" }))).param).toBe("input");
    expect((await rejection(local.speech!({ model: "m", input: "x", speed: 5 }))).param).toBe("speed");
  });

  it("gives other WAVs a placeholder text and rejects non-WAV files", async () => {
    const foreign = encodeWav(new Int16Array(24_000 * 2.4), 24_000);
    expect(await local.transcribe!({ model: "m", file: foreign })).toEqual({ text: "[local transcription: 2.4 s of audio]", durationSeconds: 2.4 });
    const e = await rejection(local.transcribe!({ model: "m", file: new TextEncoder().encode("ID3 not a wav") }));
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", "file"]);
  });
});

describe("local provider: video", () => {
  it("moves queued → processing → completed over videoDurationMs on the injected clock", async () => {
    const clock = createManualClock();
    const p = createLocalProvider({ clock, videoDurationMs: 3000 });
    const job = await p.createVideo({ model: "local-video", prompt: "a boat", seconds: 4 });
    expect(job).toMatchObject({ status: "queued", progress: 0 });
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "queued", progress: 0 });
    clock.advance(500);
    expect((await p.getVideo(job.upstreamId)).status).toBe("queued");
    clock.advance(1000);
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "processing", progress: 50 });
    clock.advance(1499);
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "processing", progress: 99 });
    clock.advance(1);
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "completed", progress: 100, url: `local://videos/${job.upstreamId}.mp4` });
    const other = await p.createVideo({ model: "m", prompt: "a boat" });
    expect(other.upstreamId).not.toBe(job.upstreamId);
  });

  it("fails a job whose prompt contains [fail], and keeps state in the id across provider instances", async () => {
    const clock = createManualClock();
    const job = await createLocalProvider({ clock }).createVideo({ model: "m", prompt: "please [FAIL] now" });
    const restarted = createLocalProvider({ clock });
    clock.advance(1500);
    expect((await restarted.getVideo(job.upstreamId)).status).toBe("processing");
    clock.advance(1500);
    const state = await restarted.getVideo(job.upstreamId);
    expect(state.status).toBe("failed");
    expect(state.error).toMatch(/\[fail\]/);
  });

  it("answers 502 with upstreamStatus 404 for an unknown id, and validates seconds and size", async () => {
    const e = await rejection(local.getVideo("vid_nope"));
    expect([e.status, e.code, e.details?.upstreamStatus]).toEqual([502, "upstream_error", 404]);
    expect((await rejection(local.createVideo({ model: "m", prompt: "p", seconds: 0 }))).param).toBe("seconds");
    expect((await rejection(local.createVideo({ model: "m", prompt: "p", size: "huge" }))).param).toBe("size");
  });
});

describe("local provider: signals and registry", () => {
  it("rejects with the abort reason when the signal is already aborted", async () => {
    const reason = new Error("caller left");
    const signal = AbortSignal.abort(reason);
    await expect(local.embeddings!({ model: "m", input: "x", signal })).rejects.toBe(reason);
    await expect(local.speech!({ model: "m", input: "x", signal })).rejects.toBe(reason);
    await expect(local.getVideo("lvid_1_1_0_1", signal)).rejects.toBe(reason);
  });

  it("looks providers up by name and exposes video only where served", () => {
    const embedOnly = { embeddings: local.embeddings! };
    const registry = createProviderRegistry({ local, "embed-only": embedOnly });
    expect(registry.names()).toEqual(["embed-only", "local"]);
    expect(registry.inference("local")).toBe(local);
    expect(registry.video("local")).toBe(local);
    expect(registry.video("embed-only")).toBeUndefined();
    expect(registry.inference("nope")).toBeUndefined();
    expect(createProviderRegistry(new Map([["local", local]])).names()).toEqual(["local"]);
  });
});
