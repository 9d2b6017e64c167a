/**
 * The official OpenAI npm SDK against the gateway on a real port (`serve()`, the `local`
 * provider): embeddings (the SDK's default base64 encoding), images, speech bytes and a multipart
 * transcription of that speech. Every call is billed to one service key, and the key's budget
 * equals the sum of the receipts. `models.list` and `models.retrieve` read the catalog's cards
 * (free). OpenAI-style errors surface as the SDK's typed errors.
 */
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { serve, type RunningServer } from "./server.js";

const OWNER = "0x00000000000000000000000000000000000000c3";
/** The host app's secret: with it, x-session-user-address names the wallet the key is created for. */
const INTERNAL_SECRET = "openai-sdk-test-internal-secret";
let running: RunningServer;
let key: { keyId: string; token: string };
let client: OpenAI;
const receipts: { finalAmountWei: string; subject: string }[] = [];

/** The receipt of the `X-Receipt` header (base64url JSON). */
const headerReceipt = (headers: Headers) => JSON.parse(Buffer.from(headers.get("x-receipt") ?? "", "base64url").toString("utf8"));

async function keyView(): Promise<{ budgetUsed: string; budgetReserved: string }> {
  const res = await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { budgetUsed: string; budgetReserved: string };
}

beforeAll(async () => {
  running = await serve(createGateway({ sweepIntervalMs: 0, video: { pollerIntervalMs: 0 }, internalSecret: INTERNAL_SECRET }), { port: 0 });
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
    body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
  });
  expect(res.status).toBe(201);
  key = (await res.json()) as typeof key;
  client = new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0, timeout: 10_000 });
});

afterAll(() => running?.close({ graceMs: 100 }));

describe("the OpenAI SDK against the gateway (local provider)", () => {
  it("embeddings.create: the SDK's default base64 encoding decodes to unit vectors; receipt in body and header", async () => {
    const { data, response } = await client.embeddings.create({ model: "text-embedding-3-small", input: ["hello world", "hello there"] }).withResponse();
    expect(data.object).toBe("list");
    expect(data.model).toBe("text-embedding-3-small");
    expect(data.data.map((d) => [d.index, d.embedding.length])).toEqual([
      [0, 1536],
      [1, 1536],
    ]);
    const norm = Math.hypot(...data.data[0]!.embedding);
    expect(norm).toBeCloseTo(1, 5);
    expect(data.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const receipt = (data as unknown as { receipt: { finalAmountWei: string; subject: string } }).receipt;
    expect(headerReceipt(response.headers)).toEqual(receipt);
    expect(receipt.subject).toBe("openai:text-embedding-3-small");
    receipts.push(receipt);
  });

  it("images.generate: b64_json PNG, billed per image and the prompt's tokens", async () => {
    const { data, response } = await client.images
      .generate({ model: "gpt-image-1", prompt: "a red kite", size: "1024x1024", quality: "low", n: 1 })
      .withResponse();
    expect(data.data).toHaveLength(1);
    expect(Buffer.from(data.data![0]!.b64_json!, "base64").subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const receipt = headerReceipt(response.headers);
    // $0.011 for the image and "a red kite" (3 tokens) at $5 per million.
    expect(receipt).toMatchObject({ subject: "openai:gpt-image-1", providerAmountWei: "11015", settlement: { status: "queued" } });
    expect((data as unknown as { receipt: unknown }).receipt).toEqual(receipt);
    receipts.push(receipt);
  });

  it("audio.speech.create (wav) and audio.transcriptions.create (multipart via toFile) round-trip the text", async () => {
    const text = "Tollgate meters every call.";
    const speech = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: text, response_format: "wav" });
    expect(speech.headers.get("content-type")).toBe("audio/wav");
    const wav = Buffer.from(await speech.arrayBuffer());
    expect(wav.subarray(0, 4).toString("latin1")).toBe("RIFF");
    expect(wav.subarray(8, 12).toString("latin1")).toBe("WAVE");
    const spoken = headerReceipt(speech.headers);
    expect(spoken).toMatchObject({ subject: "openai:tts-1", lineItems: [{ key: "characters", quantity: text.length }] });
    receipts.push(spoken);

    const file = await toFile(wav, "speech.wav", { type: "audio/wav" });
    const { data, response } = await client.audio.transcriptions.create({ file, model: "whisper-1" }).withResponse();
    expect(data.text).toBe(text);
    const heard = headerReceipt(response.headers);
    expect(heard.subject).toBe("openai:whisper-1");
    expect((data as unknown as { receipt: unknown }).receipt).toEqual(heard);
    receipts.push(heard);
  });

  it("the key's budget was charged exactly the sum of the receipts; nothing is left reserved", async () => {
    expect(receipts).toHaveLength(4);
    const sum = receipts.reduce((s, r) => s + BigInt(r.finalAmountWei), 0n);
    expect(sum).toBeGreaterThan(0n);
    const view = await keyView();
    expect([view.budgetUsed, view.budgetReserved]).toEqual([sum.toString(), "0"]);
  });

  it("models.list iterates cards with OpenAI's Model fields; models.retrieve takes chat model ids, with or without /", async () => {
    const before = await keyView();
    const listed: OpenAI.Models.Model[] = [];
    for await (const model of client.models.list()) listed.push(model);
    // The SDK's `Page` reads `data` and never follows `next_cursor`: one page, the default 50.
    expect(listed).toHaveLength(50);
    for (const m of listed) {
      expect(m).toMatchObject({ id: expect.any(String), object: "model", created: 0, owned_by: expect.any(String) });
      const card = m as OpenAI.Models.Model & { modelId: string; provider: string };
      expect([m.id, m.owned_by]).toEqual([card.modelId, card.provider]);
    }
    // `limit` (up to 200) as a query option gets the whole bundled catalog in one page.
    const everything = await client.models.list({ query: { limit: 200 } });
    const { total } = (await (await fetch(`${running.url}/v1/models?limit=1`)).json()) as { total: number };
    expect(total).toBeGreaterThan(50);
    expect(everything.data).toHaveLength(total);
    expect(everything.data.map((m) => m.id)).toContain("gpt-4o-mini");

    const gpt = await client.models.retrieve("gpt-4o-mini");
    expect(gpt).toMatchObject({ id: "gpt-4o-mini", object: "model", created: 0, owned_by: "openai" });
    // The SDK encodes `/` in a path parameter as %2F, which the gateway's greedy `{model}` decodes.
    const sent: string[] = [];
    const recording = new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0, fetch: (url, init) => (sent.push(String(url)), fetch(url, init)) });
    const llama = await recording.models.retrieve("meta-llama/Llama-3.3-70B-Instruct-Turbo");
    expect(sent).toEqual([`${running.url}/v1/models/meta-llama%2FLlama-3.3-70B-Instruct-Turbo`]);
    expect(llama).toMatchObject({ id: "meta-llama/Llama-3.3-70B-Instruct-Turbo", object: "model", created: 0, owned_by: "together" });
    expect(everything.data).toContainEqual(llama);
    const missing = await client.models.retrieve("no-such/model").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
    expect(await keyView()).toEqual(before);
  });

  it("errors arrive as the SDK's typed errors with OpenAI code/param, and charge nothing", async () => {
    const before = await keyView();
    const missing = await client.embeddings.create({ model: "no-such-model", input: "x" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
    const bad = await client.images.generate({ model: "dall-e-2", prompt: "x", size: "640x480" as "256x256" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("size");
    const stranger = new OpenAI({ apiKey: `svc-${"A".repeat(43)}`, baseURL: `${running.url}/v1`, maxRetries: 0 });
    const denied = await stranger.embeddings.create({ model: "text-embedding-3-small", input: "x" }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((denied as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_key");
    expect(await keyView()).toMatchObject({ budgetUsed: before.budgetUsed, budgetReserved: "0" });
  });
});
