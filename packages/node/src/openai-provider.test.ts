/**
 * The OpenAI-compatible provider over the pooled undici client (the Node hot path), against a
 * local stub of the OpenAI API.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAICompatibleProvider, encodeWav, GatewayError, parseMultipart } from "@tollgate/core";
import { createUndiciHttpClient } from "./http-client.js";

let server: http.Server;
let base: string;
const http1 = createUndiciHttpClient({ defaultTimeoutMs: 5_000 });
const auths: (string | undefined)[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      auths.push(req.headers.authorization);
      const body = Buffer.concat(chunks);
      const send = (status: number, v: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(v));
      if (req.url === "/v1/embeddings") {
        const json = JSON.parse(body.toString("utf8")) as { model: string };
        if (json.model === "slow") return void setTimeout(() => send(200, {}), 1_500);
        if (json.model === "bad") return void send(400, { error: { message: "bad model", type: "invalid_request_error" } });
        return void send(200, { data: [{ index: 0, embedding: [0.25, 0.75] }], usage: { prompt_tokens: 3, total_tokens: 3 } });
      }
      if (req.url === "/v1/audio/speech") return void res.writeHead(200, { "content-type": "audio/wav" }).end(Buffer.from("RIFFxxxx"));
      if (req.url === "/v1/audio/transcriptions") {
        const form = parseMultipart(new Uint8Array(body), req.headers["content-type"]!);
        return void send(200, { text: `got ${form.files.file!.data.length} bytes as ${form.fields.response_format}` });
      }
      send(404, { error: { message: "no route" } });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await http1.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("OpenAI-compatible provider over the undici client", () => {
  const provider = (timeoutMs?: number) =>
    createOpenAICompatibleProvider({ baseUrl: base, apiKey: "sk-node", http: http1, ...(timeoutMs ? { timeoutMs } : {}) });

  it("serves embeddings, speech and a multipart transcription", async () => {
    // Passed through: the upstream's bytes, only the usage read.
    const embedded = await provider().embeddings!({ model: "m", input: "hi" });
    expect([embedded.data, embedded.usage]).toEqual([[], { promptTokens: 3, totalTokens: 3 }]);
    expect(JSON.parse(Buffer.from(embedded.raw!).toString("utf8"))).toEqual({ data: [{ index: 0, embedding: [0.25, 0.75] }], usage: { prompt_tokens: 3, total_tokens: 3 } });
    const speech = await provider().speech!({ model: "tts-1", input: "hi", responseFormat: "wav" });
    expect([Buffer.from(speech.audio).toString(), speech.contentType]).toEqual(["RIFFxxxx", "audio/wav"]);
    const wav = encodeWav(new Int16Array(12_000), 24_000);
    expect(await provider().transcribe!({ model: "whisper-1", file: wav })).toEqual({ text: `got ${wav.length} bytes as verbose_json`, durationSeconds: 0.5 });
    expect(auths.every((a) => a === "Bearer sk-node")).toBe(true);
  });

  it("maps an upstream 400 to 502, a slow answer to 504 and a caller abort to its reason", async () => {
    const bad = await provider().embeddings!({ model: "bad", input: "x" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(GatewayError);
    expect([(bad as GatewayError).status, (bad as GatewayError).details]).toEqual([502, { upstreamStatus: 400, upstreamMessage: "bad model" }]);
    const slow = await provider(200).embeddings!({ model: "slow", input: "x" }).catch((e: unknown) => e);
    expect([(slow as GatewayError).status, (slow as GatewayError).code]).toEqual([504, "upstream_timeout"]);
    const reason = new Error("gone");
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 100);
    await expect(provider().embeddings!({ model: "slow", input: "x", signal: controller.signal })).rejects.toBe(reason);
  });
});
