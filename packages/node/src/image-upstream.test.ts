/**
 * Image generations against an upstream stub, through the OpenAI SDK on a real port, on a real
 * SQLite file: the size and quality the price was read at go upstream, defaults included (the
 * images made are the ones billed), and an upstream that answers more images than `n` serves and
 * bills the `n` paid for.
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

const OWNER = "0x00000000000000000000000000000000000000d8";
const SECRET = "image-upstream-internal-secret-0123456789";
const dir = mkdtempSync(join(tmpdir(), "tollgate-image-upstream-"));
const bodies: Record<string, unknown>[] = [];
let imagesAnswered = 1;
let upstream: http.Server;
let served: ServedKey;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ created: 1, data: Array.from({ length: imagesAnswered }, (_, i) => ({ b64_json: `aW1hZ2U${i}` })) }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = createGateway({
    store: createSqliteStore({ filename: join(dir, "gateway.db") }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } } },
  });
  served = await serveWithKey(gateway, SECRET, OWNER);
});
afterAll(async () => {
  await served?.running.close({ graceMs: 100 });
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const spent = async () => BigInt((await served.spend()).budgetUsed);
/** The gateway's own price of `images` at `variant` (POST /api/payments/meter/model). */
const price = async (modelId: string, images: number, variant: Record<string, string>) => {
  const res = await fetch(`${served.running.url}/api/payments/meter/model`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ modelId, provider: "openai", modality: "image", media: Object.assign({ images }, variant) }),
  });
  return BigInt(((await res.json()) as { finalAmountWei: string }).finalAmountWei);
};

it("a call without size or quality sends the card's priced defaults upstream, and is billed at them", async () => {
  const before = await spent();
  const answer = await served.openai.images.generate({ model: "dall-e-3", prompt: "a cat" });
  expect(answer.data).toHaveLength(1);
  expect(bodies.at(-1)).toMatchObject({ model: "dall-e-3", size: "1024x1024", quality: "standard", n: 1 });
  expect((await spent()) - before).toBe(await price("dall-e-3", 1, { size: "1024x1024", quality: "standard" }));
});

it("an upstream answering four images for n=1 serves and bills one", async () => {
  imagesAnswered = 4;
  const before = await spent();
  const answer = await served.openai.images.generate({ model: "dall-e-2", prompt: "a cat", n: 1, size: "256x256" });
  imagesAnswered = 1;
  expect(answer.data).toHaveLength(1);
  expect((await spent()) - before).toBe(await price("dall-e-2", 1, { size: "256x256" }));
});
