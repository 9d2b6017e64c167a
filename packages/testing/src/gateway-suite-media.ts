/**
 * The media route suite (docs/media.md): the five paid routes through
 * `gateway.fetch` on a real store, billed by a service key — answers, receipts (body field and
 * `X-Receipt`), budget headers, the key's budget; the check order (fields → model → payment →
 * upstream → settle); and every failure leaving the budget as it was: 400/404/413/401/402, an
 * upstream 500, malformed JSON or timeout (a local node:http stub), and a client disconnect.
 * x402 is not configured here (its path has its own suite). A store's test file runs it in one line:
 *
 * ```ts
 * runMediaRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesToBase64 } from "@tollgate/core/internals";
import type { GatewayOptions } from "@tollgate/core";
import { encodeMultipart, encodeWav } from "@tollgate/core/internals";
import { bearer, expectError, UNKNOWN_TOKEN, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";
import { expectPaid, expectUncharged, headerReceipt, richKey, send, type SendInit } from "./gateway-suite-media-helpers.js";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];
const b64bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** A local upstream stub: `/<mode>/…` answers per mode; any other mode never answers (`arrived()` tells when one came). */
function startStub() {
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const mode = req.url?.split("/")[1];
      if (mode === "fail500") return void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "boom" } }));
      if (mode === "badjson") return void res.writeHead(200, { "content-type": "application/json" }).end("{not json");
      const n = Number(req.url?.split("/")[2]); // usage/<tokens>
      const usage = { data: [{ index: 0, embedding: [1, 0] }], usage: { prompt_tokens: n, total_tokens: n } };
      if (mode === "usage") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(usage));
      waiters.splice(0).forEach((w) => w());
    });
  });
  return {
    listen: () => new Promise<string>((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    /** Resolves once a request to `hang` has arrived. */
    arrived: () => new Promise<void>((resolve) => waiters.push(resolve)),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const EMBED = { model: "text-embedding-3-small", input: "hello metered world" };
const IMAGE = { model: "dall-e-2", prompt: "a lighthouse", size: "256x256" };

/** Registers the media route suite for the store `name` in the current vitest file. */
export function runMediaRouteSuite(name: string, options: GatewaySuiteOptions): void {
  // `extra` may be a function: the stub's port is known only once the suite has started.
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: Partial<GatewayOptions> | (() => Partial<GatewayOptions>) = {}) =>
    it(title, () => withGateway(options, fn, typeof extra === "function" ? extra() : extra));
  const stub = startStub();
  let stubUrl = "";
  const upstream = (mode: string, timeoutMs?: number): Partial<GatewayOptions> => ({
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stubUrl}/${mode}`, apiKey: "sk-stub", ...(timeoutMs ? { timeoutMs } : {}) } } },
  });

  describe(`media routes: ${name}`, () => {
    beforeAll(async () => void (stubUrl = await stub.listen()));
    afterAll(() => stub.close());

    test("embeddings: 200 OpenAI list with a receipt; the key pays exactly the receipt", async (h) => {
      const key = await richKey(h);
      const r = await send(h, "/v1/embeddings", { token: key.token, json: { ...EMBED, input: ["hello metered world", "hello again"] } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ object: "list", model: "text-embedding-3-small", usage: { prompt_tokens: 5, total_tokens: 5 } });
      expect(r.body.data.map((d: any) => [d.object, d.index, d.embedding.length])).toEqual([
        ["embedding", 0, 1536],
        ["embedding", 1, 1536],
      ]);
      const receipt = await expectPaid(h, r, key, "openai:text-embedding-3-small", { modality: "embedding", usage: { promptTokens: 5 } });
      // The intent behind the receipt is settled, and it is the gateway's: the public settle refuses it.
      const listed = await h.call("GET", "/api/payments/intents", { headers: { authorization: `Bearer ${key.token}` } });
      const intent = listed.body.intents.find((i: any) => i.paymentIntentId === receipt.paymentIntentId);
      expect([intent?.status, intent?.finalAmountWei, intent?.managed]).toEqual(["settled", receipt.finalAmountWei, true]);
      expectError(await h.settle({ paymentIntentId: receipt.paymentIntentId, finalAmountWei: receipt.finalAmountWei }), 403, "forbidden");
      await expectUncharged(h, key, receipt.finalAmountWei);
    });

    test("images/generations: b64_json PNGs, priced per image by the size/quality variant", async (h) => {
      const key = await richKey(h);
      const r = await send(h, "/v1/images/generations", { token: key.token, json: { ...IMAGE, n: 2, response_format: "b64_json" } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.created).toBe(Math.floor(h.clock.now() / 1000));
      expect(r.body.data).toHaveLength(2);
      for (const d of r.body.data) expect([...b64bytes(d.b64_json).subarray(0, 4)]).toEqual(PNG_SIGNATURE);
      const first = await expectPaid(h, r, key, "openai:dall-e-2", { modality: "image", media: { images: 2, size: "256x256" } });
      expect(first.providerAmountWei).toBe("32000"); // 2 × $0.016
      const hd = await send(h, "/v1/images/generations", { token: key.token, json: { model: "gpt-image-1", prompt: "x", size: "1024x1024", quality: "low" } });
      const second = await expectPaid(
        h,
        hd,
        key,
        "openai:gpt-image-1",
        // GPT Image bills the prompt's tokens beside the image: "x" is one token at $5 per million.
        { modality: "image", usage: { promptTokens: 1 }, media: { images: 1, size: "1024x1024", quality: "low" } },
        BigInt(first.finalAmountWei),
      );
      expect(second.providerAmountWei).toBe("11005");
    });

    test("images/edits: the image as JSON base64, as a data URL, and as a multipart file", async (h) => {
      const key = await richKey(h);
      const png = b64bytes((await send(h, "/v1/images/generations", { token: key.token, json: IMAGE })).body.data[0].b64_json);
      let used = BigInt((await h.inspect(key.token, key.keyId)).budgetUsed);
      const bodies: { json?: unknown; form?: { body: Uint8Array; contentType: string } }[] = [
        { json: { ...IMAGE, image: bytesToBase64(png) } },
        { json: { ...IMAGE, image_url: `data:image/png;base64,${bytesToBase64(png)}` } },
        {
          form: encodeMultipart(
            { model: "dall-e-2", prompt: "add a boat", size: "256x256", n: "1" },
            { image: { filename: "in.png", contentType: "image/png", data: png } },
          ),
        },
      ];
      for (const body of bodies) {
        const r = await send(h, "/v1/images/edits", { token: key.token, ...body });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect([...b64bytes(r.body.data[0].b64_json).subarray(0, 4)]).toEqual(PNG_SIGNATURE);
        const receipt = await expectPaid(h, r, key, "openai:dall-e-2", { modality: "image", media: { images: 1, size: "256x256" } }, used);
        used += BigInt(receipt.finalAmountWei);
      }
    });

    test("audio/speech: audio/wav bytes with X-Receipt and budget headers", async (h) => {
      const key = await richKey(h);
      const r = await send(h, "/v1/audio/speech", {
        token: key.token,
        json: { model: "tts-1", input: "hello tollgate", voice: "alloy", response_format: "wav" },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("audio/wav");
      expect(new TextDecoder().decode(r.bytes.subarray(0, 4))).toBe("RIFF");
      expect(r.body).toBeNull();
      const receipt = await expectPaid(h, r, key, "openai:tts-1", { modality: "audio", media: { characters: 14 } });
      expect(receipt.lineItems).toEqual([expect.objectContaining({ key: "characters", quantity: 14 })]);
    });

    test("audio/speech on a card priced per audio second: a WAV answer is billed its length (slower speech: longer, billed more)", async (h) => {
      const key = await richKey(h);
      const input = "a sentence long enough to take a few seconds to say";
      // The local provider speaks 60 ms of tone a character at speed 1.
      const normal = await send(h, "/v1/audio/speech", { token: key.token, json: { model: "gpt-4o-mini-tts", input, response_format: "wav" } });
      await expectPaid(h, normal, key, "openai:gpt-4o-mini-tts", { modality: "audio", media: { seconds: Math.ceil(input.length * 0.06) } });
      const used = BigInt((await h.inspect(key.token, key.keyId)).budgetUsed);
      // At half speed the quote doubles too (~0.08 s a character / speed), so the longer clip fits the reservation.
      const slow = await send(h, "/v1/audio/speech", { token: key.token, json: { model: "gpt-4o-mini-tts", input, response_format: "wav", speed: 0.5 } });
      await expectPaid(h, slow, key, "openai:gpt-4o-mini-tts", { modality: "audio", media: { seconds: Math.ceil(input.length * 0.12) } }, used);
    });

    test("audio/transcriptions: the speech WAV as base64, data URL and multipart reads back its text", async (h) => {
      const key = await richKey(h);
      const wav = (await send(h, "/v1/audio/speech", { token: key.token, json: { model: "tts-1", input: "the quick brown fox", response_format: "wav" } }))
        .bytes;
      let used = BigInt((await h.inspect(key.token, key.keyId)).budgetUsed);
      const seconds = (19 * 60) / 1000; // 60 ms of tone per character
      const forms: SendInit[] = [
        { json: { model: "whisper-1", file: bytesToBase64(wav) } },
        { json: { model: "whisper-1", file: `data:audio/wav;base64,${bytesToBase64(wav)}`, language: "en" } },
        { form: encodeMultipart({ model: "whisper-1" }, { file: { filename: "speech.wav", contentType: "audio/wav", data: wav } }) },
      ];
      for (const init of forms) {
        const r = await send(h, "/v1/audio/transcriptions", { token: key.token, ...init });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.text).toBe("the quick brown fox");
        const receipt = await expectPaid(h, r, key, "openai:whisper-1", { modality: "audio", media: { seconds } }, used);
        used += BigInt(receipt.finalAmountWei);
      }
      const text = await send(h, "/v1/audio/transcriptions", {
        token: key.token,
        json: { model: "whisper-1", file: bytesToBase64(wav), response_format: "text" },
      });
      expect([text.status, text.headers.get("content-type"), new TextDecoder().decode(text.bytes)]).toEqual([
        200,
        "text/plain; charset=utf-8",
        "the quick brown fox",
      ]);
      await expectPaid(h, text, key, "openai:whisper-1", { modality: "audio", media: { seconds } }, used);
    });

    const VALID: [string, unknown][] = [
      ["/v1/embeddings", EMBED],
      ["/v1/images/generations", IMAGE],
      ["/v1/images/edits", { ...IMAGE, image: bytesToBase64(new Uint8Array([1, 2, 3])) }],
      ["/v1/audio/speech", { model: "tts-1", input: "hi" }],
      ["/v1/audio/transcriptions", { model: "whisper-1", file: bytesToBase64(new Uint8Array(64)) }],
    ];

    test("no payment: 402 payment_required on every route (x402 off)", async (h) => {
      for (const [path, body] of VALID) expectError(await send(h, path, { json: body }), 402, "payment_required");
    });

    test("400 naming the field for missing or malformed input; nothing is reserved", async (h) => {
      const key = await richKey(h);
      const cases: [string, unknown, string][] = [
        ["/v1/embeddings", { input: "x" }, "model"],
        ["/v1/embeddings", { model: "  " }, "model"],
        ["/v1/embeddings", { model: "text-embedding-3-small" }, "input"],
        ["/v1/embeddings", { model: "text-embedding-3-small", input: [] }, "input"],
        ["/v1/images/generations", { model: "dall-e-2" }, "prompt"],
        ["/v1/images/generations", { prompt: "x" }, "model"],
        ["/v1/images/generations", { ...IMAGE, n: 0 }, "n"],
        ["/v1/images/generations", { ...IMAGE, size: "640x480" }, "size"],
        // A variant the card does not take: its price covers only what its own params allow (FLUX: width and height up to 1 MP).
        ["/v1/images/generations", { model: "black-forest-labs/FLUX.1.1-pro", prompt: "x", size: "2048x2048" }, "size"],
        ["/v1/images/generations", { ...IMAGE, quality: "hd" }, "quality"],
        ["/v1/images/generations", { model: "dall-e-3", prompt: "x", quality: "ultra" }, "quality"],
        ["/v1/images/edits", { model: "dall-e-2", prompt: "x" }, "image"],
        ["/v1/images/edits", { model: "dall-e-2", image: "AAAA" }, "prompt"],
        ["/v1/images/edits", { ...IMAGE, image: "not base64!" }, "image"],
        ["/v1/images/edits", { ...IMAGE, image_url: "https://example.com/a.png" }, "image_url"],
        ["/v1/audio/speech", { model: "tts-1" }, "input"],
        ["/v1/audio/speech", { model: "tts-1", input: "x", speed: 9 }, "speed"],
        ["/v1/audio/transcriptions", { model: "whisper-1" }, "file"],
        ["/v1/audio/transcriptions", { model: "whisper-1", file: "%%%" }, "file"],
        ["/v1/audio/transcriptions", { model: "whisper-1", file: "data:audio/wav,abc" }, "file"],
      ];
      for (const [path, body, param] of cases) expectError(await send(h, path, { token: key.token, json: body }), 400, "invalid_request", param);
      expectError(await send(h, "/v1/embeddings", { token: key.token, raw: "{oops" }), 400, "invalid_request");
      const noFile = encodeMultipart({ model: "whisper-1" });
      expectError(await send(h, "/v1/audio/transcriptions", { token: key.token, form: noFile }), 400, "invalid_request", "file");
      // A WAV without a sample prices to 0: refused, with a key and without one (no 402 offer of 0 to pay).
      const silent = { model: "whisper-1", file: bytesToBase64(encodeWav(new Int16Array(0), 16_000)) };
      for (const token of [key.token, undefined]) expectError(await send(h, "/v1/audio/transcriptions", { ...(token ? { token } : {}), json: silent }), 400, "invalid_request");
      // Refused before any payment: no 402 offer for a size the price does not cover.
      const flux = { model: "black-forest-labs/FLUX.1.1-pro", prompt: "x", size: "2048x2048" };
      expectError(await send(h, "/v1/images/generations", { json: flux }), 400, "invalid_request", "size");
      await expectUncharged(h, key);
    });

    test("unknown model: 404 model_not_found before any payment; a wrong modality: 400 model", async (h) => {
      const key = await richKey(h);
      for (const [path, body] of VALID) {
        const unknown = { ...(body as object), model: "no-such-model" };
        expectError(await send(h, path, { token: key.token, json: unknown }), 404, "model_not_found");
        expectError(await send(h, path, { json: unknown }), 404, "model_not_found"); // not 402
        const wrong = { ...(body as object), model: path === "/v1/embeddings" ? "tts-1" : "text-embedding-3-small" };
        expectError(await send(h, path, { token: key.token, json: wrong }), 400, "invalid_request", "model");
      }
      await expectUncharged(h, key);
    });

    test(
      "413 payload_too_large over limits.mediaBodyBytes (JSON and multipart)",
      async (h) => {
        const key = await richKey(h);
        expectError(await send(h, "/v1/embeddings", { token: key.token, json: { ...EMBED, input: "x".repeat(3000) } }), 413, "payload_too_large");
        const form = encodeMultipart({ model: "whisper-1" }, { file: { filename: "a.wav", data: new Uint8Array(4096) } });
        expectError(await send(h, "/v1/audio/transcriptions", { token: key.token, form }), 413, "payload_too_large");
        expect((await send(h, "/v1/embeddings", { token: key.token, json: EMBED })).status).toBe(200); // under the limit
      },
      { limits: { mediaBodyBytes: 2048 } },
    );

    test("401 for an unknown, malformed, revoked or expired key; nothing is charged", async (h) => {
      expectError(await send(h, "/v1/embeddings", { token: UNKNOWN_TOKEN, json: EMBED }), 401, "invalid_key");
      expectError(await send(h, "/v1/embeddings", { token: "nope", json: EMBED }), 401, "invalid_key");
      const [revoked, sibling] = [await richKey(h), await richKey(h)];
      expect((await h.call("DELETE", `/api/keys/${revoked.keyId}`, { headers: bearer(sibling.token) })).status).toBe(200);
      expectError(await send(h, "/v1/embeddings", { token: revoked.token, json: EMBED }), 401, "key_revoked");
      const expiring = await h.createKey({ budgetLimit: "100000000", expiresAt: h.clock.now() + 1000 });
      h.clock.advance(1001);
      expectError(await send(h, "/v1/images/generations", { token: expiring.token, json: IMAGE }), 401, "key_expired");
      await expectUncharged(h, { keyId: expiring.keyId, token: sibling.token });
      await expectUncharged(h, sibling);
    });

    test("402 budget_exhausted (plain envelope) when the quote exceeds the key's remaining budget", async (h) => {
      const key = await h.createKey({ budgetLimit: "16000" }); // one 256x256 image costs 16000 + fee
      expectError(await send(h, "/v1/images/generations", { token: key.token, json: IMAGE }), 402, "budget_exhausted");
      await expectUncharged(h, key);
      const r = await send(h, "/v1/embeddings", { token: key.token, json: EMBED }); // a small call still fits
      await expectPaid(h, r, key, "openai:text-embedding-3-small", { modality: "embedding", usage: { promptTokens: 3 } });
    });

    const failures: [string, string, string, number, string, unknown][] = [
      ["HTTP 500", "fail500", "/v1/embeddings", 502, "upstream_error", { upstreamStatus: 500, upstreamMessage: "boom" }],
      ["HTTP 500", "fail500", "/v1/audio/speech", 502, "upstream_error", { upstreamStatus: 500, upstreamMessage: "boom" }],
      ["malformed JSON", "badjson", "/v1/images/generations", 502, "upstream_error", { upstreamStatus: 200 }],
      ["timeout", "hang", "/v1/embeddings", 504, "upstream_timeout", undefined],
    ];
    for (const [what, mode, path, status, code, details] of failures) {
      test(
        `upstream ${what} on ${path} → ${status} ${code}; the reservation is released, nothing charged`,
        async (h) => {
          const key = await richKey(h);
          const e = expectError(await send(h, path, { token: key.token, json: VALID.find(([p]) => p === path)![1] }), status, code);
          expect(e.details).toEqual(details);
          expect(e.message).not.toContain("sk-stub");
          await expectUncharged(h, key);
        },
        () => upstream(mode, 150),
      );
    }

    // The quote bounds embedding tokens by UTF-8 bytes and 4 special tokens an input; the charge is the upstream's usage, at most the quote.
    const usages: [string, string, number][] = [
      ["the upstream's reported usage is settled", "hello metered world", 2],
      ["more usage than quoted is charged the quote", "x".repeat(2000), 1e9],
    ];
    for (const [what, input, reported] of usages) {
      test(
        `embeddings: ${what}`,
        async (h) => {
          const key = await richKey(h);
          const r = await send(h, "/v1/embeddings", { token: key.token, json: { ...EMBED, input } });
          // The upstream's answer passed through as it was sent (this stub leaves out `object`), with the receipt added.
          expect([r.body.usage, r.body.data]).toEqual([{ prompt_tokens: reported, total_tokens: reported }, [{ embedding: [1, 0], index: 0 }]]);
          expect(r.body.receipt).toMatchObject({ finalAmountWei: expect.any(String) });
          await expectPaid(h, r, key, "openai:text-embedding-3-small", { modality: "embedding", usage: { promptTokens: Math.min(reported, input.length + 4) } });
        },
        () => upstream(`usage/${reported}`),
      );
    }

    test(
      "client disconnect mid-request: the reservation is released and nothing is charged",
      async (h) => {
        const key = await richKey(h);
        const controller = new AbortController();
        const arrived = stub.arrived();
        const pending = send(h, "/v1/images/generations", { token: key.token, json: IMAGE, signal: controller.signal }).catch(() => null);
        await arrived;
        expect((await h.inspect(key.token, key.keyId)).budgetReserved).not.toBe("0"); // reserved while upstream works
        controller.abort();
        for (let i = 0; i < 200; i++) {
          const view = await h.inspect(key.token, key.keyId);
          if (view.budgetReserved === "0") break;
          await new Promise((r) => setTimeout(r, 10));
        }
        await expectUncharged(h, key);
        await pending;
      },
      () => upstream("hang", 30_000),
    );
  });
}
