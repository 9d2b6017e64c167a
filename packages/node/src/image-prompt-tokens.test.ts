/**
 * GPT Image bills the prompt's text tokens on top of the image (OpenAI: $5 per million on
 * gpt-image-1): through the OpenAI SDK against the gateway on a real port, with a local node:http
 * stub standing in for OpenAI that reports them as OpenAI does, the longest prompt the route takes
 * is reserved and billed for at least what the upstream bills.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMemoryStore, tokenCounter } from "@tollgate/core";
import { serveOnStub } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000c5";
const SECRET = "image-tokens-internal-secret-0123456";

let openai: OpenAI;
let close: () => Promise<void>;
let imagePromptTokens = 0;

beforeAll(async () => {
  ({ openai, close } = await serveOnStub(
    (req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", async () => {
        const body = JSON.parse(Buffer.concat(parts).toString("utf8") || "{}");
        if (req.url === "/images/generations") {
          // What OpenAI reports (and bills) for gpt-image-1: the prompt's text tokens and the image's output tokens.
          imagePromptTokens = (await tokenCounter()).count(body.prompt);
          const usage = {
            input_tokens: imagePromptTokens,
            output_tokens: 272,
            total_tokens: imagePromptTokens + 272,
            input_tokens_details: { text_tokens: imagePromptTokens, image_tokens: 0 },
          };
          return void res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ created: 1, data: [{ b64_json: "iVBORw0KGgo=" }], usage }));
        }
        res.writeHead(404).end();
      });
    },
    { store: createMemoryStore(), secret: SECRET, owner: OWNER },
  ));
});

afterAll(async () => {
  await close?.();
});

const receiptOf = (headers: Headers) =>
  JSON.parse(Buffer.from(headers.get("x-receipt") ?? "", "base64url").toString("utf8")) as { finalAmountWei: string; lineItems: unknown[] };

it("images/generations on gpt-image-1: a 32,000-character prompt is billed the tokens the upstream reports, beside the image", async () => {
  // 32,000 random CJK characters (the route's limit): ~1.9 o200k tokens each.
  let seed = 7;
  const prompt = Array.from({ length: 32_000 }, () => String.fromCharCode(0x4e00 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 20_000))).join("");
  const { response } = await openai.images.generate({ model: "gpt-image-1", prompt, quality: "low", size: "1024x1024" }).withResponse();
  const receipt = receiptOf(response.headers);
  // What OpenAI bills: text input tokens at $5/M plus 272 image output tokens at $40/M (= the card's $0.011).
  const upstreamCostAtoms = BigInt(Math.ceil(imagePromptTokens * 5 + 272 * 40));
  expect(BigInt(receipt.finalAmountWei)).toBeGreaterThanOrEqual(upstreamCostAtoms);
  expect(receipt.lineItems).toEqual([
    expect.objectContaining({ key: "input_tokens", quantity: imagePromptTokens, amountWei: String(imagePromptTokens * 5) }),
    expect.objectContaining({ key: "image", quantity: 1, amountWei: "11000" }),
  ]);
});
