import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { createFetchHttpClient } from "../http/client.js";
import { float32ToBase64 } from "./bytes.js";
import { parseMultipart } from "./multipart.js";
import type { MultipartForm } from "./multipart.js";
import { createOpenAICompatibleProvider } from "./openai-compatible.js";
import { encodeWav } from "./wav.js";

const API_KEY = "sk-test-secret-123";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  json?: Record<string, unknown>;
  form?: MultipartForm;
}

let server: http.Server;
let base: string;
let seen: Seen[] = [];
const videoPolls = new Map<string, number>();
/** The responses of model "hang", left unanswered. */
const hanging: http.ServerResponse[] = [];

/** Answers like api.openai.com; the `model` selects a misbehaviour. */
function stub(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void {
  const s: Seen = { method: req.method!, url: req.url!, headers: req.headers };
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) s.json = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  if (type.startsWith("multipart/form-data")) s.form = parseMultipart(new Uint8Array(body), type);
  seen.push(s);
  const send = (status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
  const model = String(s.json?.model ?? s.form?.fields.model ?? "");
  // The key straddles the 500-character cut of the relayed message.
  if (model === "key-at-cut") return void send(401, { error: { message: `${"q".repeat(480)} key used: ${API_KEY}` } });
  // An upstream (or a proxy before it) that echoes the credentials it refused.
  if (model === "echo-credentials") return void send(401, { error: { message: `Invalid api-key '${s.headers["api-key"]}' (proxy auth: ${s.headers["x-proxy-auth"]})` } });
  if (model === "bad-model") return void send(400, { error: { message: `bad model; your key ${API_KEY} is fine`, type: "invalid_request_error" } });
  if (model === "boom") return void res.writeHead(500, { "content-type": "text/html" }).end("<h1>oops</h1>");
  if (model === "garbage") return void res.writeHead(200, { "content-type": "application/json" }).end("{not json");
  if (model === "wrong-shape") return void send(200, { data: "nope" });
  if (model === "slow") return void setTimeout(() => send(200, {}), 1_500);
  if (model === "hang") return void hanging.push(res); // never answers (closed in afterAll)

  const url = req.url!;
  if (url === "/v1/embeddings") {
    const inputs = Array.isArray(s.json!.input) ? (s.json!.input as string[]) : [s.json!.input as string];
    const data = inputs.map((_, index) => ({
      object: "embedding",
      index,
      embedding: s.json!.encoding_format === "base64" ? float32ToBase64([index, 0.5]) : [index, 0.5],
    }));
    const usage = { prompt_tokens: 7, total_tokens: 7 };
    // "usage-first" puts usage before data: the provider cannot pass the answer through and decodes it.
    return void send(200, model === "usage-first" ? { usage, object: "list", data: data.reverse(), model } : { object: "list", data: data.reverse(), model, usage });
  }
  if (url === "/v1/images/generations" || url === "/v1/images/edits") {
    // An edit's input also counts its images.
    const details = url === "/v1/images/edits" ? { text_tokens: 4, image_tokens: 6 } : { text_tokens: 10 };
    const usage = { input_tokens: 10, output_tokens: 20, total_tokens: 30, input_tokens_details: details };
    return void send(200, { created: 1_700_000_000, data: [{ b64_json: "aGVsbG8=" }, { url: "https://cdn.example/x.png", revised_prompt: "r" }], usage });
  }
  if (url === "/v1/audio/speech") return void res.writeHead(200, { "content-type": "audio/mpeg" }).end(Buffer.from([0xff, 0xfb, 1, 2, 3]));
  if (url === "/v1/audio/transcriptions") {
    if (model === "json-only" && s.form!.fields.response_format !== "json")
      return void send(400, { error: { message: "response_format 'verbose_json' is not compatible with model 'json-only'. Use 'json' or 'text' instead.", type: "invalid_request_error", param: "response_format" } });
    if (model === "json-only") return void send(200, { text: "plain json", usage: { type: "tokens", input_tokens: 12, output_tokens: 3, total_tokens: 15 } });
    const withDuration = s.form!.fields.prompt !== "no-duration";
    const segments = s.form!.fields.prompt === "segments" ? [{ id: 0, seek: 0, start: 0, end: 2.5, text: " hello there", tokens: [1, 2] }] : s.form!.fields.prompt === "odd-segments" ? [{ start: "0", end: null }] : undefined;
    return void send(200, { task: "transcribe", text: "hello there", ...(withDuration ? { duration: 2.5 } : {}), ...(segments ? { segments } : {}) });
  }
  if (url === "/v1/videos" && req.method === "POST") {
    const id = model === "fail-video" ? "video_fail" : `video_${seen.length}`;
    return void send(200, { id, object: "video", status: "queued", progress: 0, model });
  }
  const poll = /^\/v1\/videos\/([^/]+)$/.exec(url);
  if (poll && req.method === "GET") {
    const id = decodeURIComponent(poll[1]!);
    if (id === "missing") return void send(404, { error: { message: "Video not found", type: "invalid_request_error" } });
    const n = (videoPolls.get(id) ?? 0) + 1;
    videoPolls.set(id, n);
    if (id === "video_fail") return void send(200, { id, status: "failed", error: { code: "moderation", message: "blocked by moderation" } });
    const status = n === 1 ? "in_progress" : "completed";
    return void send(200, { id, object: "video", status, progress: n === 1 ? 42 : 100 });
  }
  send(404, { error: { message: "no route" } });
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => stub(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  seen = [];
});

const provider = (timeoutMs?: number) =>
  createOpenAICompatibleProvider({
    baseUrl: `${base}/`,
    apiKey: API_KEY,
    http: createFetchHttpClient(),
    headers: { "OpenAI-Organization": "org-1" },
    ...(timeoutMs ? { timeoutMs } : {}),
  });

async function failure(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(GatewayError);
  expect((e as Error).message).not.toContain(API_KEY);
  return e as GatewayError;
}

describe("OpenAI-compatible provider", () => {
  it("sends embeddings with the Authorization header and passes the answer through, reading only its usage", async () => {
    const r = await provider().embeddings!({ model: "text-embedding-3-small", input: ["a", "b"], dimensions: 2 });
    expect([r.data, r.usage]).toEqual([[], { promptTokens: 7, totalTokens: 7 }]);
    // The upstream's bytes, as it sent them (here in reverse index order).
    expect(JSON.parse(new TextDecoder().decode(r.raw))).toEqual({
      object: "list",
      data: [
        { object: "embedding", index: 1, embedding: [1, 0.5] },
        { object: "embedding", index: 0, embedding: [0, 0.5] },
      ],
      model: "text-embedding-3-small",
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]!.headers["openai-organization"]).toBe("org-1");
    expect(seen[0]!.json).toEqual({ model: "text-embedding-3-small", input: ["a", "b"], dimensions: 2 });
  });

  it("decodes, validates and orders an answer it cannot pass through (usage not last)", async () => {
    const r = await provider().embeddings!({ model: "usage-first", input: ["a", "b"], dimensions: 2 });
    expect(r).toEqual({
      data: [
        [0, 0.5],
        [1, 0.5],
      ],
      usage: { promptTokens: 7, totalTokens: 7 },
    });
    const b = await provider().embeddings!({ model: "usage-first", input: "a", encodingFormat: "base64" });
    expect(b.data).toEqual([float32ToBase64([0, 0.5])]);
  });

  it("maps an OpenAI error answer to 502 with upstreamStatus and the scrubbed message", async () => {
    const e = await failure(provider().embeddings!({ model: "bad-model", input: "x" }));
    expect([e.status, e.code]).toEqual([502, "upstream_error"]);
    expect(e.message).toContain("127.0.0.1");
    expect(e.details).toEqual({ upstreamStatus: 400, upstreamMessage: "bad model; your key [redacted] is fine" });
    // Credentials configured as headers (Azure's api-key, a proxy's bearer token) are redacted too.
    const echoed = await failure(
      createOpenAICompatibleProvider({ baseUrl: `${base}/`, http: createFetchHttpClient(), headers: { "api-key": "azure-secret-0123456789", "X-Proxy-Auth": "Bearer proxy-token-abcdef" } }).embeddings!({
        model: "echo-credentials",
        input: "x",
      }),
    );
    expect((echoed.details as { upstreamMessage: string }).upstreamMessage).toBe("Invalid api-key '[redacted]' (proxy auth: [redacted])");
    // A key across the cut leaves no prefix of itself behind.
    const atCut = await failure(provider().embeddings!({ model: "key-at-cut", input: "x" }));
    expect((atCut.details as { upstreamMessage: string }).upstreamMessage).toBe(`${"q".repeat(480)} key used: [redacted`);
    expect(JSON.stringify(atCut.details)).not.toContain(API_KEY.slice(0, 4));
  });

  it("maps a 500 to 502, malformed JSON and a wrong shape to 502 naming the host", async () => {
    const e500 = await failure(provider().generateImages!({ model: "boom", prompt: "p", n: 1 }));
    expect([e500.status, e500.details]).toEqual([502, { upstreamStatus: 500 }]);
    const garbage = await failure(provider().embeddings!({ model: "garbage", input: "x" }));
    expect([garbage.status, garbage.message]).toEqual([502, expect.stringMatching(/127\.0\.0\.1:\d+ answered malformed JSON/)]);
    const shape = await failure(provider().embeddings!({ model: "wrong-shape", input: "x" }));
    expect([shape.status, shape.message]).toEqual([502, expect.stringMatching(/unexpected shape \(data:/)]);
  });

  it("answers 504 when the upstream has not answered within timeoutMs, and hangs up on it", async () => {
    const e = await failure(provider(200).embeddings!({ model: "hang", input: "x" }));
    expect([e.status, e.code]).toEqual([504, "upstream_timeout"]);
    // The upstream never answered, so the 504 is the deadline's; the provider dropped the request.
    const upstream = hanging.at(-1)!;
    expect(upstream.headersSent).toBe(false);
    await new Promise<void>((resolve) => (upstream.socket === null || upstream.socket.destroyed ? resolve() : upstream.once("close", () => resolve())));
    expect(upstream.writableEnded).toBe(false);
  });

  it("rejects with the caller's abort reason mid-request", async () => {
    const controller = new AbortController();
    const reason = new Error("client disconnected");
    setTimeout(() => controller.abort(reason), 100);
    await expect(provider().embeddings!({ model: "slow", input: "x", signal: controller.signal })).rejects.toBe(reason);
  });

  it("answers 502 when the upstream cannot be reached", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const p = createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, http: createFetchHttpClient() });
    const e = await failure(p.embeddings!({ model: "m", input: "x" }));
    expect([e.status, e.code]).toEqual([502, "upstream_error"]);
  });

  it("generates images with extra fields and reads usage", async () => {
    const r = await provider().generateImages!({
      model: "gpt-image-1",
      prompt: "a fox",
      n: 2,
      size: "1024x1024",
      quality: "high",
      extra: { background: "transparent", model: "ignored" },
    });
    expect(seen[0]!.json).toEqual({ background: "transparent", model: "gpt-image-1", prompt: "a fox", n: 2, size: "1024x1024", quality: "high" });
    expect(r).toEqual({
      created: 1_700_000_000,
      data: [{ b64_json: "aGVsbG8=" }, { url: "https://cdn.example/x.png" }],
      usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30, textTokens: 10 },
    });
  });

  it("sends image edits as multipart that parses at the upstream, bytes intact", async () => {
    const image = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 13, 10, 45, 45, 255]);
    const mask = Uint8Array.from([1, 2, 3, 13, 10]);
    await provider().editImages!({ model: "gpt-image-1", prompt: "add a hat", image, mask, n: 1, size: "512x512" });
    const form = seen[0]!.form!;
    expect(form.fields).toEqual({ model: "gpt-image-1", prompt: "add a hat", n: "1", size: "512x512" });
    expect(form.files.image).toEqual({ filename: "image.png", contentType: "image/png", data: image });
    expect([...form.files.mask!.data]).toEqual([...mask]);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("sends several source images as repeated image[] parts, in order, and reads the input's image tokens", async () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 1]);
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 2]);
    const r = await provider().editImages!({
      model: "gpt-image-1",
      prompt: "merge",
      image: png,
      moreImages: [{ data: jpeg }, { data: png, mime: "image/webp" }],
      n: 1,
    });
    const form = seen[0]!.form!;
    expect(form.files).toEqual({});
    expect(form.fileLists).toEqual({
      "image[]": [
        { filename: "image.png", contentType: "image/png", data: png },
        { filename: "image-2.jpeg", contentType: "image/jpeg", data: jpeg },
        { filename: "image-3.webp", contentType: "image/webp", data: png },
      ],
    });
    expect(r.usage).toEqual({ inputTokens: 10, outputTokens: 20, totalTokens: 30, textTokens: 4, imageTokens: 6 });
  });

  it("returns speech bytes with the upstream's content type and counts characters", async () => {
    const r = await provider().speech!({ model: "tts-1", input: "héllo 🌍", responseFormat: "mp3", speed: 1.5 });
    expect(r).toEqual({ audio: Uint8Array.from([0xff, 0xfb, 1, 2, 3]), contentType: "audio/mpeg", characters: 7 });
    expect(seen[0]!.json).toEqual({ model: "tts-1", input: "héllo 🌍", voice: "alloy", response_format: "mp3", speed: 1.5 });
  });

  it("sends transcriptions as multipart verbose_json and falls back to the WAV header for duration", async () => {
    const wav = encodeWav(new Int16Array(24_000 * 3), 24_000);
    const r = await provider().transcribe!({ model: "whisper-1", file: wav, language: "en" });
    expect(r).toEqual({ text: "hello there", durationSeconds: 2.5 });
    const form = seen[0]!.form!;
    expect(form.fields).toEqual({ model: "whisper-1", response_format: "verbose_json", language: "en" });
    expect(form.files.file!.filename).toBe("audio.wav");
    expect(Buffer.compare(Buffer.from(form.files.file!.data), Buffer.from(wav))).toBe(0);
    const noDuration = await provider().transcribe!({ model: "whisper-1", file: wav, prompt: "no-duration" });
    expect(noDuration.durationSeconds).toBe(3);
  });

  it("asks a model that refuses verbose_json again with json, and from then on with json only", async () => {
    const p = provider();
    const wav = encodeWav(new Int16Array(24_000 * 2), 24_000);
    expect(await p.transcribe!({ model: "json-only", file: wav })).toEqual({ text: "plain json", durationSeconds: 2 });
    expect(seen.map((x) => x.form!.fields.response_format)).toEqual(["verbose_json", "json"]);
    expect(await p.transcribe!({ model: "json-only", file: wav })).toEqual({ text: "plain json", durationSeconds: 2 });
    expect(seen.map((x) => x.form!.fields.response_format)).toEqual(["verbose_json", "json", "json"]);
    // Another 400 is the upstream's error, not a reason to ask again.
    await expect(p.transcribe!({ model: "bad-model", file: wav })).rejects.toMatchObject({ code: "upstream_error", details: { upstreamStatus: 400 } });
    expect(seen).toHaveLength(4);
    // Whisper's segments come through (their start, end and text); segments of another shape are read as none.
    expect((await p.transcribe!({ model: "whisper-1", file: wav, prompt: "segments" })).segments).toEqual([{ start: 0, end: 2.5, text: " hello there" }]);
    expect(await p.transcribe!({ model: "whisper-1", file: wav, prompt: "odd-segments" })).toEqual({ text: "hello there", durationSeconds: 2.5 });
  });

  it("creates and polls a video job through the /videos API", async () => {
    const p = provider();
    const job = await p.createVideo({ model: "sora-2", prompt: "a boat", seconds: 4, size: "1280x720" });
    expect(job).toEqual({ upstreamId: expect.stringMatching(/^video_/), status: "queued", progress: 0 });
    expect(seen[0]!.json).toEqual({ model: "sora-2", prompt: "a boat", seconds: "4", size: "1280x720" });
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "processing", progress: 42 });
    // The priced params go upstream under the card's names; an explicit size is not overwritten.
    await p.createVideo({ model: "ray-2", prompt: "a boat", seconds: 9, size: "960x540", priced: { resolution: "540p", size: "1280x720" } });
    expect(seen.at(-1)!.json).toEqual({ model: "ray-2", prompt: "a boat", seconds: "9", size: "960x540", resolution: "540p" });
    expect(await p.getVideo(job.upstreamId)).toEqual({ status: "completed", progress: 100, url: `${base}/videos/${job.upstreamId}/content` });
    const failed = await p.createVideo({ model: "fail-video", prompt: "x", image: Uint8Array.from([0xff, 0xd8, 0xff, 0]) });
    expect(seen.at(-1)!.form!.files.input_reference!.contentType).toBe("image/jpeg");
    expect(await p.getVideo(failed.upstreamId)).toEqual({ status: "failed", error: "blocked by moderation" });
    const missing = await failure(p.getVideo("missing"));
    expect([missing.status, missing.details?.upstreamStatus]).toEqual([502, 404]);
  });

  it("refuses a base URL that is not http(s)", () => {
    expect(() => createOpenAICompatibleProvider({ baseUrl: "ftp://x", http: createFetchHttpClient() })).toThrow(TypeError);
    expect(() => createOpenAICompatibleProvider({ baseUrl: "not a url", http: createFetchHttpClient() })).toThrow(TypeError);
  });
});
