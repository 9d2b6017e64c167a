/**
 * The one pricing function, table-driven: direct calls (lineAmount / priceQuantities /
 * priceUsage) and the same cases through POST /api/payments/meter/model; then "a quote and the
 * settled amount for the same usage agree to the atom" through prepare/settle.
 */
import { describe, expect, it } from "vitest";
import type { ModelCard } from "../catalog/card.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import type { GatewayOptions } from "../options.js";
import { parseDecimal } from "../money.js";
import { lineAmount, priceQuantities, pricedSelection } from "./pricing.js";
import { priceUsage, type Media, type Usage } from "./usage.js";

const card = (modelId: string): ModelCard => {
  const found = NATIVE_CATALOG.find((c) => c.modelId === modelId && c.provider === "openai");
  if (!found) throw new Error(`no openai:${modelId} in the bundled catalog`);
  return found;
};
const dec = (s: string) => parseDecimal(s)!;

/** The host app's secret: with it, x-session-user-address names the wallet a key is created for. */
const INTERNAL_SECRET = "pricing-test-internal-secret";
const OWNER = { "x-session-user-address": "0x00000000000000000000000000000000000000c3", "x-internal-secret": INTERNAL_SECRET };
const gateway = (options: Partial<GatewayOptions> = {}) => createGateway({ sweepIntervalMs: 0, internalSecret: INTERNAL_SECRET, ...options });
const post = async (g: ReturnType<typeof gateway>, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await g.fetch(new Request(`http://gateway.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }));
  return { status: res.status, body: (await res.json()) as any };
};

/** [key, quantity, amountWei] of each expected line, in order. */
type Line = [string, string, string];
interface Case {
  name: string;
  modelId: string;
  modality: string;
  usage?: Usage;
  media?: Media;
  lines: Line[];
  /** Platform fee at the default 100 bps. */
  fee: string;
}

const CASES: Case[] = [
  // tokens: gpt-4o input 2.50, cached 1.25, output 10.00 USD per 1M
  { name: "tokens: cached input is subtracted from input", modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1000, completionTokens: 500, cachedInputTokens: 200 }, lines: [["input_tokens", "800", "2000"], ["cached_input_tokens", "200", "250"], ["output_tokens", "500", "5000"]], fee: "73" },
  { name: "tokens: each line is ceil'ed on its own (3 + 2, not ceil(3.75))", modelId: "gpt-4o", modality: "text", usage: { promptTokens: 2, cachedInputTokens: 1 }, lines: [["input_tokens", "1", "3"], ["cached_input_tokens", "1", "2"]], fee: "1" },
  { name: "tokens: all input cached → no input line", modelId: "gpt-4o", modality: "text", usage: { promptTokens: 100, cachedInputTokens: 100, completionTokens: 0 }, lines: [["cached_input_tokens", "100", "125"]], fee: "2" },
  { name: "tokens: totalTokens alone counts as input", modelId: "gpt-4o", modality: "text", usage: { totalTokens: 400 }, lines: [["input_tokens", "400", "1000"]], fee: "10" },
  { name: "tokens: gpt-4o-mini, a million each", modelId: "gpt-4o-mini", modality: "text", usage: { promptTokens: 1_000_000, completionTokens: 1_000_000 }, lines: [["input_tokens", "1000000", "150000"], ["output_tokens", "1000000", "600000"]], fee: "7500" },
  { name: "tokens: a 2^53-1 prompt stays exact", modelId: "gpt-4o", modality: "text", usage: { promptTokens: Number.MAX_SAFE_INTEGER }, lines: [["input_tokens", "9007199254740991", "22517998136852478"]], fee: "225179981368525" },
  // images
  { name: "images: size and quality select the variant", modelId: "gpt-image-1", modality: "image", media: { images: 2, size: "1024x1536", quality: "high" }, lines: [["image", "2", "500000"]], fee: "5000" },
  { name: "images: omitted params take the card defaults (auto/auto)", modelId: "gpt-image-1", modality: "image", media: { images: 1 }, lines: [["image", "1", "250000"]], fee: "2500" },
  { name: "images: quality given, size defaulted", modelId: "gpt-image-1", modality: "image", media: { images: 3, quality: "low" }, lines: [["image", "3", "48000"]], fee: "480" },
  { name: "images: cheapest variant", modelId: "gpt-image-1", modality: "image", media: { images: 1, quality: "low", size: "1024x1024" }, lines: [["image", "1", "11000"]], fee: "110" },
  { name: "images: dall-e-3 defaults (standard 1024x1024)", modelId: "dall-e-3", modality: "image", media: { images: 1 }, lines: [["image", "1", "40000"]], fee: "400" },
  { name: "images: dall-e-3 hd 1024x1792", modelId: "dall-e-3", modality: "image", media: { images: 1, quality: "hd", size: "1024x1792" }, lines: [["image", "1", "120000"]], fee: "1200" },
  { name: "images: dall-e-2 size only", modelId: "dall-e-2", modality: "image", media: { images: 4, size: "512x512" }, lines: [["image", "4", "72000"]], fee: "720" },
  // seconds
  { name: "seconds per minute: 90 s of whisper at $0.006/min", modelId: "whisper-1", modality: "audio", media: { seconds: 90 }, lines: [["audio_seconds", "90", "9000"]], fee: "90" },
  { name: "seconds per minute: fractional 4.5 s", modelId: "whisper-1", modality: "audio", media: { seconds: 4.5 }, lines: [["audio_seconds", "4.5", "450"]], fee: "5" },
  { name: "seconds per minute: a millisecond rounds up to 1 atom", modelId: "whisper-1", modality: "audio", media: { seconds: 0.001 }, lines: [["audio_seconds", "0.001", "1"]], fee: "1" },
  { name: "seconds per second: 4.5 s of sora-2 at $0.10/s", modelId: "sora-2", modality: "video", media: { seconds: 4.5 }, lines: [["video_seconds", "4.5", "450000"]], fee: "4500" },
  { name: "seconds per second: 8 s", modelId: "sora-2", modality: "video", media: { seconds: 8 }, lines: [["video_seconds", "8", "800000"]], fee: "8000" },
  // characters: tts-1 $0.015 per 1k
  { name: "characters per 1k: 1000", modelId: "tts-1", modality: "audio", media: { characters: 1000 }, lines: [["characters", "1000", "15000"]], fee: "150" },
  { name: "characters per 1k: 1234 (fee rounds up)", modelId: "tts-1", modality: "audio", media: { characters: 1234 }, lines: [["characters", "1234", "18510"]], fee: "186" },
  { name: "characters per 1k: one character", modelId: "tts-1", modality: "audio", media: { characters: 1 }, lines: [["characters", "1", "15"]], fee: "1" },
];

const provider = (c: Case) => c.lines.reduce((s, [, , a]) => s + BigInt(a), 0n);

describe("lineAmount: ceil(quantity × unitPriceUsd × 10^6 / unitScale), exact", () => {
  it.each([
    ["1", "2.50", "usd_per_1m_tokens", 3n],
    ["1000000", "2.50", "usd_per_1m_tokens", 2_500_000n],
    ["1", "0.0000001", "usd_per_1m_tokens", 1n],
    ["0", "2.50", "usd_per_1m_tokens", 0n],
    ["1", "0.015", "usd_per_1k_characters", 15n],
    ["3", "0.016", "usd_per_image", 48_000n],
    ["4.5", "0.10", "usd_per_second", 450_000n],
    ["90", "0.006", "usd_per_minute", 9_000n],
    ["4.5", "0.006", "usd_per_minute", 450n],
    ["0.5", "0.006", "usd_per_minute", 50n],
    ["7", "0.001", "usd_per_request", 7_000n],
    ["0.1", "0.0000003", "usd_per_request", 1n],
  ] as const)("%s × %s %s = %s", (quantity, price, unit, expected) => {
    expect(lineAmount(dec(quantity), price, unit)).toBe(expected);
  });

  it("a huge token count stays exact (bigint)", () => {
    const huge = { units: 10n ** 30n + 1n, exp: 0 };
    expect(lineAmount(huge, "2.50", "usd_per_1m_tokens")).toBe(2_500_000_000_000_000_000_000_000_000_003n);
    const p = priceQuantities(card("gpt-4o"), [{ key: "input_tokens", quantity: huge }], {}, 100);
    expect(p.providerAmount).toBe(2_500_000_000_000_000_000_000_000_000_003n);
    expect(p.platformFee).toBe(25_000_000_000_000_000_000_000_000_001n);
    expect(p.finalAmount).toBe(2_525_000_000_000_000_000_000_000_000_004n);
    expect(p.lineItems[0]).toMatchObject({ quantity: "1000000000000000000000000000001", amountWei: "2500000000000000000000000000003" });
  });
});

describe("pricedSelection: the params a price depends on, as sent upstream", () => {
  const byId = (provider: string, modelId: string) => NATIVE_CATALOG.find((c) => c.provider === provider && c.modelId === modelId)!;
  it("names each priced param once, the caller's value over the card's default, and nothing unpriced", () => {
    const ray = byId("luma", "ray-2");
    // Priced by resolution only: its default when the caller names none, the caller's value otherwise; aspect_ratio is not priced.
    expect(pricedSelection(ray, {})).toEqual({ resolution: "720p" });
    expect(pricedSelection(ray, { resolution: "540p", ratio: "1:1", size: "x" })).toEqual({ resolution: "540p" });
    // One price for every clip: nothing is added to what goes upstream (OpenAI's /videos refuses unknown fields).
    expect(pricedSelection(card("sora-2"), { resolution: "1080p", ratio: "16:9" })).toEqual({});
  });
});

describe("priceQuantities: platform fee = ceil(provider × bps / 10000)", () => {
  const gpt4o = card("gpt-4o");
  it.each([
    // provider 7250 atoms (2900 input tokens)
    [2900, 0, 0n],
    [2900, 100, 73n], // 72.5 rounds up by 1
    [2900, 250, 182n], // 181.25 rounds up
    [1600, 250, 100n], // exact: 4000 × 2.5%
    [1600, 100, 40n],
    [1, 1, 1n], // ceil(3 × 0.0001)
    [2900, 10_000, 7250n],
  ])("%i input tokens at %i bps → fee %s", (tokens, bps, fee) => {
    const p = priceQuantities(gpt4o, [{ key: "input_tokens", quantity: dec(String(tokens)) }], {}, bps);
    expect(p.platformFee).toBe(fee);
    expect(p.finalAmount).toBe(p.providerAmount + fee);
  });

  it("skips zero quantities; a per-line selection overrides the shared one", () => {
    const p = priceQuantities(card("dall-e-3"), [{ key: "image", quantity: dec("0") }, { key: "image", quantity: dec("1"), selection: { quality: "hd", size: "1024x1024" } }], { quality: "standard", size: "1024x1024" }, 0);
    expect(p.lineItems).toEqual([{ key: "image", unit: "usd_per_image", quantity: "1", unitPriceUsd: "0.080", amountWei: "80000" }]);
  });

  it("an unpriced variant is a 400 naming the param; an unknown key is a 400", () => {
    const fails = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as { code: string; status: number; param?: string };
      }
      throw new Error("did not throw");
    };
    expect(fails(() => priceQuantities(card("dall-e-3"), [{ key: "image", quantity: dec("1") }], { quality: "standard", size: "512x512" }, 0))).toMatchObject({ code: "invalid_request", status: 400, param: "size" });
    expect(fails(() => priceQuantities(card("gpt-image-1"), [{ key: "image", quantity: dec("1") }], { quality: "ultra", size: "auto" }, 0))).toMatchObject({ status: 400, param: "quality" });
    expect(fails(() => priceQuantities(card("gpt-4o"), [{ key: "image", quantity: dec("1") }], {}, 0))).toMatchObject({ status: 400 });
  });
});

describe.each(CASES)("$name", (c) => {
  const expected = {
    lineItems: c.lines.map(([key, quantity, amountWei]) => expect.objectContaining({ key, quantity, amountWei })),
    providerAmountWei: provider(c).toString(),
    platformFeeWei: c.fee,
    finalAmountWei: (provider(c) + BigInt(c.fee)).toString(),
  };

  it("priceUsage", () => {
    const p = priceUsage(card(c.modelId), c.usage, c.media, 100);
    expect({ lineItems: p.lineItems, providerAmountWei: p.providerAmount.toString(), platformFeeWei: p.platformFee.toString(), finalAmountWei: p.finalAmount.toString() }).toEqual(expected);
  });

  it("POST /api/payments/meter/model", async () => {
    const g = gateway();
    const r = await post(g, "/api/payments/meter/model", { modelId: c.modelId, modality: c.modality, ...(c.usage ? { usage: c.usage } : {}), ...(c.media ? { media: c.media } : {}) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The origin client's ModelMeterQuote: quantity and unitPriceUsd are JSON numbers, amounts strings.
    const subject = `openai:${c.modelId}`;
    const lineItems = c.lines.map(([key, quantity, amountWei]) => expect.objectContaining({ key, quantity: Number(quantity), unitPriceUsd: expect.any(Number), amountWei }));
    expect(r.body).toEqual({ modelId: c.modelId, provider: "openai", subject, known: true, ...expected, lineItems, meter: { subject, lineItems: expect.any(Array) } });
    for (const line of r.body.lineItems) expect(Object.keys(line).sort()).toEqual(["amountWei", "key", "quantity", "unit", "unitPriceUsd"]);
    // The meter is the priced lines without amounts (plus `when` on variant-priced keys).
    expect(r.body.meter.lineItems).toEqual(r.body.lineItems.map(({ amountWei: _a, ...line }: any) => ({ ...line, ...(c.media?.size || c.modality === "image" ? { when: expect.any(Object) } : {}) })));
    await g.close();
  });
});

describe("POST /api/payments/meter/model: fees, string inputs and errors", () => {
  it.each([
    [0, "7250", "0"],
    [100, "7250", "73"],
    [250, "7250", "182"],
  ])("feeBps %i", async (feeBps, providerAmountWei, platformFeeWei) => {
    const g = gateway({ feeBps });
    const r = await post(g, "/api/payments/meter/model", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 2900 } });
    expect(r.body).toMatchObject({ providerAmountWei, platformFeeWei, finalAmountWei: (BigInt(providerAmountWei) + BigInt(platformFeeWei)).toString() });
    await g.close();
  });

  it("digit strings are accepted for counts and seconds", async () => {
    const g = gateway();
    expect((await post(g, "/api/payments/meter/model", { modelId: "whisper-1", modality: "audio", media: { seconds: "90" } })).body.providerAmountWei).toBe("9000");
    expect((await post(g, "/api/payments/meter/model", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: "1000" } })).body.providerAmountWei).toBe("2500");
    await g.close();
  });

  it.each([
    ["a size with no price", { modelId: "dall-e-3", modality: "image", media: { images: 1, size: "512x512" } }, 400, "invalid_request", "size"],
    ["a size with no price (two-param variants)", { modelId: "gpt-image-1", modality: "image", media: { images: 1, size: "512x512", quality: "high" } }, 400, "invalid_request", "size"],
    ["a quality with no price", { modelId: "gpt-image-1", modality: "image", media: { images: 1, quality: "ultra" } }, 400, "invalid_request", "quality"],
    ["cached input above prompt", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1, cachedInputTokens: 2 } }, 400, "invalid_request", "usage.cachedInputTokens"],
    ["negative tokens", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: -1 } }, 400, "invalid_request", "usage.promptTokens"],
    ["fractional tokens", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1.5 } }, 400, "invalid_request", "usage.promptTokens"],
    ["an unknown usage field", { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1, bogus: 2 } }, 400, "invalid_request", undefined],
    ["nothing to meter", { modelId: "gpt-4o", modality: "text", media: { images: 2 } }, 400, "invalid_request", undefined],
    ["a modality the model does not bill", { modelId: "gpt-4o", modality: "video", media: { seconds: 4 } }, 400, "invalid_request", "modality"],
    ["no modelId", { modality: "text", usage: { promptTokens: 1 } }, 400, "invalid_request", "modelId"],
    ["no modality", { modelId: "gpt-4o", usage: { promptTokens: 1 } }, 400, "invalid_request", "modality"],
    ["an unknown model", { modelId: "no-such-model", modality: "text", usage: { promptTokens: 1 } }, 404, "model_not_found", undefined],
    ["an unknown provider for a known model", { modelId: "gpt-4o", provider: "nobody", modality: "text", usage: { promptTokens: 1 } }, 404, "model_not_found", undefined],
  ] as const)("%s → %i %s", async (_name, body, status, code, param) => {
    const g = gateway();
    const r = await post(g, "/api/payments/meter/model", body);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String), requestId: expect.stringMatching(/^req_/) });
    if (param !== undefined) expect(r.body.error.param).toBe(param);
    await g.close();
  });
});

describe("a quote and the settled amount for the same usage agree to the atom", () => {
  const meters = CASES.filter((c) => !c.name.includes("2^53")).map((c) => [c.name, { modelId: c.modelId, modality: c.modality, ...(c.usage ? { usage: c.usage } : {}), ...(c.media ? { media: c.media } : {}) }] as const);

  it.each([0, 100, 250])("at %i bps, for every case of the table", async (feeBps) => {
    const clock = createManualClock();
    const g = gateway({ feeBps, clock });
    const key = await post(g, "/api/keys", { budgetLimit: "1000000000000", expiresAt: clock.now() + 86_400_000, networkId: 8453, purpose: "api" }, OWNER);
    expect(key.status).toBe(201);
    const auth = { authorization: `Bearer ${key.body.token}`, "x-network-id": "8453" };
    for (const [name, meter] of meters) {
      const quote = await post(g, "/api/payments/meter/model", meter);
      expect(quote.status, name).toBe(200);
      const prepared = await post(g, "/api/payments/prepare", { service: "inference", action: name, resource: meter.modelId, method: "POST", meter }, auth);
      expect(prepared.status, `${name}: ${JSON.stringify(prepared.body)}`).toBe(200);
      expect(prepared.body.maxAmountWei, name).toBe(quote.body.finalAmountWei);
      const settled = await post(g, "/api/payments/settle", { paymentIntentId: prepared.body.paymentIntentId, meter });
      expect(settled.status, name).toBe(200);
      expect(settled.body, name).toEqual({
        paymentIntentId: prepared.body.paymentIntentId,
        status: "settled",
        maxAmountWei: quote.body.finalAmountWei,
        finalAmountWei: quote.body.finalAmountWei,
        releasedWei: "0",
        meterSubject: quote.body.subject,
        lineItems: quote.body.lineItems,
        providerAmountWei: quote.body.providerAmountWei,
        platformFeeWei: quote.body.platformFeeWei,
        settlement: { status: "queued" },
      });
      // The quote's own `meter` (line items, variants pinned by `when`) prepares and settles to the same atom.
      const again = await post(g, "/api/payments/prepare", { service: "inference", action: name, resource: meter.modelId, method: "POST", meter: quote.body.meter }, auth);
      expect(again.body.maxAmountWei, `${name}: ${JSON.stringify(again.body)}`).toBe(quote.body.finalAmountWei);
      const byMeter = await post(g, "/api/payments/settle", { paymentIntentId: again.body.paymentIntentId, meter: quote.body.meter });
      expect(byMeter.body, name).toMatchObject({ finalAmountWei: quote.body.finalAmountWei, lineItems: quote.body.lineItems, meterSubject: quote.body.subject });
    }
    const view = await g.fetch(new Request(`http://gateway.test/api/keys/${key.body.keyId}`, { headers: { authorization: `Bearer ${key.body.token}` } }));
    expect(((await view.json()) as any).budgetReserved).toBe("0");
    await g.close();
  });

  it("the line-item meter form prices like the usage form; a smaller usage at settle releases the rest", async () => {
    const clock = createManualClock();
    const g = gateway({ clock });
    const key = await post(g, "/api/keys", { budgetLimit: "10000000", expiresAt: clock.now() + 86_400_000, networkId: 8453, purpose: "api" }, OWNER);
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const auth = { authorization: `Bearer ${key.body.token}`, "x-network-id": "8453" };
    const usageMeter = { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1000, completionTokens: 500, cachedInputTokens: 200 } };
    const lineMeter = { subject: "openai:gpt-4o", lineItems: [{ key: "input_tokens", quantity: "800" }, { key: "cached_input_tokens", quantity: 200 }, { key: "output_tokens", quantity: "500" }] };
    const a = await post(g, "/api/payments/prepare", { service: "inference", action: "chat", resource: "gpt-4o", method: "POST", meter: usageMeter }, auth);
    const b = await post(g, "/api/payments/prepare", { service: "inference", action: "chat", resource: "gpt-4o", method: "POST", meter: lineMeter }, auth);
    expect([a.body.maxAmountWei, b.body.maxAmountWei]).toEqual(["7323", "7323"]);
    const image = await post(g, "/api/payments/prepare", { service: "inference", action: "image", resource: "gpt-image-1", method: "POST", meter: { subject: "openai:gpt-image-1", lineItems: [{ key: "image", quantity: "2", when: { size: "1024x1536", quality: "high" } }] } }, auth);
    expect(image.body.maxAmountWei).toBe("505000");
    // Settle a with less usage than quoted: 400 input tokens only → 1000 + fee 10.
    const settled = await post(g, "/api/payments/settle", { paymentIntentId: a.body.paymentIntentId, meter: { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 400 } } });
    expect(settled.body).toMatchObject({ finalAmountWei: "1010", releasedWei: "6313", providerAmountWei: "1000", platformFeeWei: "10" });
    // More usage than quoted → 409, nothing changed; the quoted usage then settles exactly.
    const over = await post(g, "/api/payments/settle", { paymentIntentId: b.body.paymentIntentId, meter: { ...usageMeter, usage: { ...usageMeter.usage, completionTokens: 501 } } });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ code: "amount_exceeds_reservation", param: "meter" });
    expect((await post(g, "/api/payments/settle", { paymentIntentId: b.body.paymentIntentId, meter: lineMeter })).body).toMatchObject({ finalAmountWei: "7323", releasedWei: "0" });
    await g.close();
  });
});
