/**
 * The embeddings reservation bounds what the upstream bills when its tokenizer adds special tokens
 * to every input (BERT's [CLS] and [SEP], as Together's BGE models count): 2,048 one-byte inputs
 * reported at 3 tokens each are billed all 6,144, not the 2,048 bytes. A local stub stands in for
 * Together; the gateway runs on a real port on a real SQLite file.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serveWithKey, type ServedKey } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000d9";
const SECRET = "embeddings-bound-internal-secret-0123456789";
const MODEL = "BAAI/bge-large-en-v1.5";
const dir = mkdtempSync(join(tmpdir(), "tollgate-embeddings-bound-"));
let upstream: http.Server;
let served: ServedKey;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text) as { input: string | string[]; model: string };
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      const tokens = inputs.length * 3; // [CLS] a [SEP]
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          model: body.model,
          data: inputs.map((_, index) => ({ object: "embedding", index, embedding: [0.1, 0.2] })),
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = createGateway({
    store: createSqliteStore({ filename: join(dir, "gateway.db") }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: {
      providers: {
        together: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, apiKey: "together-test" },
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

it("2,048 one-byte inputs reported at 3 tokens each are billed the 6,144 tokens reported", async () => {
  const before = BigInt((await served.spend()).budgetUsed);
  const answer = await served.openai.embeddings.create({ model: MODEL, input: Array.from({ length: 2048 }, () => "a") });
  expect(answer.usage.prompt_tokens).toBe(6144);
  const res = await fetch(`${served.running.url}/api/payments/meter/model`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ modelId: MODEL, provider: "together", modality: "embedding", usage: { promptTokens: 6144 } }),
  });
  const metered = BigInt(((await res.json()) as { finalAmountWei: string }).finalAmountWei);
  expect(BigInt((await served.spend()).budgetUsed) - before).toBe(metered);
});
