/**
 * Paid media calls against an upstream stub, through the OpenAI SDK on a real port, on a real
 * SQLite file: what goes upstream and what an upstream's answer is billed.
 * - images: the size and quality the price was read at go upstream, defaults included (the images
 *   made are the ones billed), and an upstream that answers more images than `n` serves and bills
 *   the `n` paid for;
 * - embeddings: the reservation bounds the special tokens a tokenizer adds to every input (BERT's
 *   [CLS] and [SEP], as Together's BGE models count), so 2,048 one-byte inputs reported at 3 tokens
 *   each are billed all 6,144, not the 2,048 bytes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { meteredPrice, serveWithKey, withJsonBody, type ServedKey } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000d8";
const SECRET = "media-upstream-internal-secret-0123456789";
const BGE = "BAAI/bge-large-en-v1.5";
const dir = mkdtempSync(join(tmpdir(), "tollgate-media-upstream-"));
const bodies: Record<string, unknown>[] = [];
let imagesAnswered = 1;
let upstream: http.Server;
let served: ServedKey;

/** The upstream: images (`imagesAnswered` of them) and embeddings reported at 3 tokens an input. */
function answer(path: string, body: Record<string, unknown>): unknown {
  if (path.endsWith("/images/generations")) return { created: 1, data: Array.from({ length: imagesAnswered }, (_, i) => ({ b64_json: `aW1hZ2U${i}` })) };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const tokens = inputs.length * 3; // [CLS] a [SEP]
  return {
    object: "list",
    model: body.model,
    data: inputs.map((_, index) => ({ object: "embedding", index, embedding: [0.1, 0.2] })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

beforeAll(async () => {
  upstream = http.createServer(
    withJsonBody((req, res, body) => {
      bodies.push(body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(req.url ?? "", body)));
    }),
  );
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const gateway = createGateway({
    store: createSqliteStore({ filename: join(dir, "gateway.db") }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: {
      providers: {
        openai: { type: "openai-compatible", baseUrl: url },
        together: { type: "openai-compatible", baseUrl: `${url}/v1`, apiKey: "together-test" },
      },
    },
  });
  served = await serveWithKey(gateway, SECRET, OWNER);
});
afterAll(async () => {
  await served?.running.close({ graceMs: 100 });
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const spent = async () => BigInt((await served.spend()).budgetUsed);
const price = (modelId: string, provider: string, modality: string, evidence: { usage?: object; media?: object }) =>
  meteredPrice(served.running.url, { modelId, provider, modality }, evidence);

it("an image call without size or quality sends the card's priced defaults upstream, and is billed at them", async () => {
  const before = await spent();
  const answer = await served.openai.images.generate({ model: "dall-e-3", prompt: "a cat" });
  expect(answer.data).toHaveLength(1);
  expect(bodies.at(-1)).toMatchObject({ model: "dall-e-3", size: "1024x1024", quality: "standard", n: 1 });
  expect((await spent()) - before).toBe(await price("dall-e-3", "openai", "image", { media: { images: 1, size: "1024x1024", quality: "standard" } }));
});

it("an upstream answering four images for n=1 serves and bills one", async () => {
  imagesAnswered = 4;
  const before = await spent();
  const answer = await served.openai.images.generate({ model: "dall-e-2", prompt: "a cat", n: 1, size: "256x256" });
  imagesAnswered = 1;
  expect(answer.data).toHaveLength(1);
  expect((await spent()) - before).toBe(await price("dall-e-2", "openai", "image", { media: { images: 1, size: "256x256" } }));
});

it("2,048 one-byte embedding inputs reported at 3 tokens each are billed the 6,144 tokens reported", async () => {
  const before = await spent();
  const answer = await served.openai.embeddings.create({ model: BGE, input: Array.from({ length: 2048 }, () => "a") });
  expect(answer.usage.prompt_tokens).toBe(6144);
  expect((await spent()) - before).toBe(await price(BGE, "together", "embedding", { usage: { promptTokens: 6144 } }));
});
