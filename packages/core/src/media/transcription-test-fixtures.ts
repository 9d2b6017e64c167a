/**
 * Test helper: a gateway on a memory store whose OpenAI-compatible provider is a local HTTP stub
 * answering `POST /v1/audio/transcriptions`, and what a fresh service key spends on one call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";
import { createMemoryStore } from "../store/memory.js";

const SECRET = "transcription-fixture-secret-0123456789";

/** A running gateway and its upstream stub. */
export interface TranscriptionGateway {
  gateway: Gateway<GatewayServices>;
  /** Every request body the stub received (latin1), in order. */
  bodies: string[];
  /**
   * Transcribes with a fresh key of 100 USDC owned by `owner` (`body` is the JSON request: model,
   * file, prompt…), expects a 200 and nothing left reserved; the text answered and the key's spend.
   */
  spent(owner: `0x${string}`, body: Record<string, unknown>): Promise<{ text: string; used: bigint }>;
  close(): Promise<void>;
}

/** Starts the stub (answering `answer` as JSON to every request) and a gateway on it. */
export async function startTranscriptionGateway(answer: () => unknown): Promise<TranscriptionGateway> {
  const bodies: string[] = [];
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push(Buffer.concat(chunks).toString("latin1"));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer()));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = createGateway({
    store: createMemoryStore(),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } },
  });
  const call = (path: string, init: RequestInit) => gateway.fetch(new Request(`http://gw.test${path}`, init));
  return {
    gateway,
    bodies,
    async spent(owner, body) {
      const created = await call("/api/keys", {
        method: "POST",
        headers: { "x-session-user-address": owner, "x-internal-secret": SECRET, "content-type": "application/json" },
        body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
      });
      const key = (await created.json()) as { token: string; keyId: string };
      const res = await call("/v1/audio/transcriptions", {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const { text } = (await res.json()) as { text: string };
      const view = await call(`/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } });
      const budget = (await view.json()) as { budgetUsed: string; budgetReserved: string };
      expect(budget.budgetReserved).toBe("0");
      return { text, used: BigInt(budget.budgetUsed) };
    },
    async close() {
      await gateway.close();
      await new Promise<void>((r) => upstream.close(() => r()));
    },
  };
}
