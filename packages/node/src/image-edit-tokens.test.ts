/**
 * GPT Image edits bill their input images' tokens beside the prompt's and the image (OpenAI: $10
 * per million on gpt-image-1, $2.50 on gpt-image-1-mini): through the OpenAI SDK's `images.edit`
 * against the gateway on a real port and a real SQLite file, with a local node:http stub standing
 * in for OpenAI. Each edit reserves 8,192 tokens per input image before the upstream call (the
 * bound docs/media.md gives; the stub reads the key's reservation while it holds the request) and
 * settles exactly what the card prices the stub's reported usage at, the bound when it reports none.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NATIVE_CATALOG, parseMultipart, tokenCounter } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import type { RunningServer } from "./server.js";
import { serveOnStub, type KeySpend } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000c6";
const SECRET = "image-edit-tokens-internal-secret-01";
/** The most image tokens the gateway reserves for one input image (docs/media.md). */
const BOUND_PER_IMAGE = 8_192n;
/** What OpenAI reports for a square input image at high input fidelity: 65 + 129 (one tile) + 4,160. */
const TOKENS_PER_IMAGE = 4_354;
const PROMPT = "put a small party hat on the cat";
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

const dir = mkdtempSync(join(tmpdir(), "tollgate-image-edit-"));
let running: RunningServer;
let key: { keyId: string; token: string };
let openai: OpenAI;
/** How the stub answers the next edit: usage as OpenAI reports it, no usage, or more image tokens than any bound. */
let mode: "report" | "none" | "over" = "report";
/** What the stub saw of each edit: the image parts (and mask) it received, what it reported, and the key's reservation meanwhile. */
const seen: { images: Uint8Array[]; mask: boolean; textTokens: number; imageTokens: number; reserved: bigint }[] = [];

let keyView: () => Promise<KeySpend>;
let close: () => Promise<void>;

beforeAll(async () => {
  const counter = await tokenCounter();
  ({
    running,
    key,
    openai,
    spend: keyView,
    close,
  } = await serveOnStub(
    (req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", async () => {
        if (req.url !== "/images/edits") return void res.writeHead(404).end();
        const form = parseMultipart(new Uint8Array(Buffer.concat(parts)), req.headers["content-type"] ?? "");
        const images = form.fileLists?.["image[]"] ?? (form.files.image ? [form.files.image] : []);
        const mask = form.files.mask !== undefined;
        // OpenAI bills each input image (and, as measured, ~32 more text tokens per image on edits).
        const textTokens = counter.count(form.fields.prompt ?? "") + 32 * images.length;
        const imageTokens = mode === "over" ? 1_000_000 : TOKENS_PER_IMAGE * (images.length + (mask ? 1 : 0));
        seen.push({ images: images.map((f) => f.data), mask, textTokens, imageTokens, reserved: BigInt((await keyView()).budgetReserved) });
        const usage = {
          input_tokens: textTokens + imageTokens,
          output_tokens: 272,
          total_tokens: textTokens + imageTokens + 272,
          input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
        };
        const body = Object.assign({ created: 1, data: [{ b64_json: "iVBORw0KGgo=" }] }, mode === "none" ? {} : { usage });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    },
    { store: createSqliteStore({ filename: join(dir, "gw.db") }), secret: SECRET, owner: OWNER },
  ));
});

afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

/** ceil(quantity × usd × 10^6 / per) in atomic units, from the card's decimal price string. */
function atoms(quantity: bigint, usd: string, per: bigint): bigint {
  const [whole, frac = ""] = usd.split(".");
  const num = quantity * BigInt(`${whole}${frac}`) * 1_000_000n;
  const den = 10n ** BigInt(frac.length) * per;
  return (num + den - 1n) / den;
}

/** The price of `model`'s low-quality square image, `textTokens` and `imageTokens`, with the default 1 % platform fee. */
function priced(model: string, textTokens: bigint, imageTokens: bigint): bigint {
  const card = NATIVE_CATALOG.find((c) => c.modelId === model && c.provider === "openai")!;
  const price = (k: string) =>
    card.pricing.find((l) => l.key === k && (k !== "image" || (l.when?.quality === "low" && l.when.size === "1024x1024")))!.unitPriceUsd;
  const provider =
    atoms(1n, price("image"), 1n) + atoms(textTokens, price("input_tokens"), 1_000_000n) + atoms(imageTokens, price("input_image_tokens"), 1_000_000n);
  return provider + (provider * 100n + 9_999n) / 10_000n;
}

/** Runs one edit of `images` (and a mask) on `model`; answers what the key paid and the stub's view of the call. */
async function edit(model: string, images: Uint8Array[], withMask = false) {
  const before = BigInt((await keyView()).budgetUsed);
  const files = await Promise.all(images.map((data, i) => toFile(data, `in-${i}.png`, { type: "image/png" })));
  const mask = withMask ? { mask: await toFile(PNG, "mask.png", { type: "image/png" }) } : {};
  const { data, response } = await openai.images
    .edit({ model, prompt: PROMPT, image: files.length === 1 ? files[0]! : files, quality: "low", size: "1024x1024", ...mask })
    .withResponse();
  expect(data.data).toHaveLength(1);
  const after = await keyView();
  expect(after.budgetReserved).toBe("0");
  const receipt = JSON.parse(Buffer.from(response.headers.get("x-receipt") ?? "", "base64url").toString("utf8")) as { finalAmountWei: string };
  const spent = BigInt(after.budgetUsed) - before;
  expect(BigInt(receipt.finalAmountWei)).toBe(spent);
  return { spent, call: seen.at(-1)! };
}

/** What an edit reserves: the image, the prompt's UTF-8 bytes as tokens, and the bound for each input image. */
const quote = (model: string, inputImages: bigint) => priced(model, BigInt(Buffer.byteLength(PROMPT)), inputImages * BOUND_PER_IMAGE);

describe("images.edit on GPT Image bills the input images' tokens", () => {
  it("one image: reserves the bound, settles the image tokens the upstream reports at $10 per million, exactly", async () => {
    mode = "report";
    const { spent, call } = await edit("gpt-image-1", [PNG]);
    expect(call.images).toEqual([PNG]);
    expect(call.reserved).toBe(quote("gpt-image-1", 1n));
    expect(call.reserved).toBeGreaterThan(priced("gpt-image-1", 0n, BOUND_PER_IMAGE));
    expect(spent).toBe(priced("gpt-image-1", BigInt(call.textTokens), BigInt(call.imageTokens)));
    // Far above what the image and prompt alone come to: 4,354 image tokens are $0.04354 of it.
    expect(spent - priced("gpt-image-1", BigInt(call.textTokens), 0n)).toBeGreaterThanOrEqual(43_540n);
  });

  it("gpt-image-1-mini: the same edit at $2.50 per million image tokens (fractional atoms rounded up)", async () => {
    mode = "report";
    const { spent, call } = await edit("gpt-image-1-mini", [PNG]);
    expect(call.reserved).toBe(quote("gpt-image-1-mini", 1n));
    expect(spent).toBe(priced("gpt-image-1-mini", BigInt(call.textTokens), BigInt(call.imageTokens)));
  });

  it("two images (image[] parts) reserve twice one image's bound, both reach the upstream, and settle on the report", async () => {
    mode = "report";
    const second = Uint8Array.from([...PNG, 1, 2, 3]);
    const { spent, call } = await edit("gpt-image-1", [PNG, second]);
    expect(call.images).toEqual([PNG, second]);
    expect(call.reserved).toBe(quote("gpt-image-1", 2n));
    const base = priced("gpt-image-1", BigInt(Buffer.byteLength(PROMPT)), 0n);
    expect(call.reserved - base).toBe(2n * (quote("gpt-image-1", 1n) - base));
    expect(spent).toBe(priced("gpt-image-1", BigInt(call.textTokens), BigInt(call.imageTokens)));
  });

  it("a mask is reserved as one more input image", async () => {
    mode = "report";
    const { spent, call } = await edit("gpt-image-1", [PNG], true);
    expect(call.mask).toBe(true);
    expect(call.reserved).toBe(quote("gpt-image-1", 2n));
    expect(spent).toBe(priced("gpt-image-1", BigInt(call.textTokens), BigInt(call.imageTokens)));
  });

  it("an upstream that reports no usage: the input images are billed at their bound, the prompt as the gateway counts it", async () => {
    mode = "none";
    const { spent } = await edit("gpt-image-1", [PNG, PNG]);
    const counted = BigInt((await tokenCounter()).count(PROMPT));
    expect(spent).toBe(priced("gpt-image-1", counted, 2n * BOUND_PER_IMAGE));
  });

  it("a report above the reservation settles at the quote, the most the key reserved", async () => {
    mode = "over";
    const { spent, call } = await edit("gpt-image-1", [PNG]);
    expect(call.imageTokens).toBeGreaterThan(Number(BOUND_PER_IMAGE));
    expect(spent).toBe(call.reserved);
    expect(spent).toBe(quote("gpt-image-1", 1n));
  });

  it("an edit without an image: 400 invalid_request naming `image`, in the error envelope; nothing reserved or charged, no upstream call", async () => {
    const before = await keyView();
    const calls = seen.length;
    const error = await openai.images.edit({ model: "gpt-image-1", prompt: PROMPT } as unknown as OpenAI.Images.ImageEditParamsNonStreaming).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const e = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.error).toMatchObject({ code: "invalid_request", type: "invalid_request_error", param: "image", requestId: e.requestID });
    expect(e.requestID).toMatch(/^req_/);
    expect(await keyView()).toMatchObject({ budgetUsed: before.budgetUsed, budgetReserved: "0" });
    expect(seen.length).toBe(calls);
  });

  it("JSON bodies take image[] too: two go upstream; seventeen are a 400 naming image[], with nothing charged", async () => {
    mode = "report";
    const post = (images: number) =>
      fetch(`${running.url}/v1/images/edits`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-image-1",
          prompt: PROMPT,
          quality: "low",
          size: "1024x1024",
          "image[]": Array(images).fill(Buffer.from(PNG).toString("base64")),
        }),
      });
    expect((await post(2)).status).toBe(200);
    expect(seen.at(-1)!.images).toEqual([PNG, PNG]);
    expect(seen.at(-1)!.reserved).toBe(quote("gpt-image-1", 2n));
    const before = await keyView();
    const refused = await post(17);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: "invalid_request", param: "image[]" });
    expect(await keyView()).toMatchObject({ budgetUsed: before.budgetUsed, budgetReserved: "0" });
  });
});
