/**
 * The budget part of the chat suite: a key that cannot afford the whole quote gets a lowered output
 * cap instead of a 402; a 402 only when not even the prompt fits; and 50 concurrent streams on one
 * key never overspend it, never get a 402 while the prompt and one token still fit, and pay exactly
 * the sum of their receipts.
 */
import { expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import type { ChatStub } from "./chat-stub.js";
import { expectError, type Harness } from "./gateway-suite-fixtures.js";
import { expectUncharged } from "./gateway-suite-media-helpers.js";
import { CHAT_MODEL, HELLO, meterChat, postChat, promptCount, readEvents, spent, streamReceipt } from "./gateway-suite-chat-helpers.js";

type Test = (title: string, fn: (h: Harness) => Promise<void>, extra?: () => Partial<GatewayOptions>) => ReturnType<typeof it>;

/** The prompt bound the quote reserves for (metering/tokens.ts `promptBound`). */
const bound = (n: number) => n + Math.ceil(n / 10) + 16;

/** Registers the budget tests inside the chat suite's describe block. */
export function runChatBudgetSuite(test: Test, stubbed: () => Partial<GatewayOptions>, stub: () => ChatStub): void {
  test(
    "a key short of the whole quote gets the output it can afford: a lowered cap sent upstream and said in x-output-cap",
    async (h) => {
      const prompt = bound(await promptCount(HELLO));
      const full = BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: 1000 }));
      const budget = BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: 300 }));
      expect(budget).toBeLessThan(full);
      const key = await h.createKey({ budgetLimit: budget.toString() });
      const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, max_completion_tokens: 1000 }, { token: key.token });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      const cap = Number(res.headers.get("x-output-cap"));
      expect(res.headers.get("x-output-cap-reason")).toBe("budget");
      expect(cap).toBeGreaterThanOrEqual(299);
      expect(cap).toBeLessThan(1000);
      // The largest cap the budget buys: one token more would not fit.
      expect(BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: cap }))).toBeLessThanOrEqual(budget);
      expect(BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: cap + 1 }))).toBeGreaterThan(budget);
      expect(stub().bodies.at(-1)!.max_completion_tokens).toBe(cap);
      expect(await spent(h, key)).toEqual({ used: body.receipt.finalAmountWei, reserved: "0" });
    },
    stubbed,
  );

  test(
    "402 budget_exhausted only when not even the prompt and one output token fit; nothing reserved",
    async (h) => {
      const floor = BigInt(await meterChat(h, { promptTokens: bound(await promptCount(HELLO)), completionTokens: 1 }));
      const key = await h.createKey({ budgetLimit: String(floor - 1n) });
      const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO }, { token: key.token });
      const e = expectError({ status: res.status, headers: res.headers, body: await res.json() }, 402, "budget_exhausted");
      expect(e.details).toMatchObject({ budgetRemaining: String(floor - 1n), required: String(floor) });
      await expectUncharged(h, key);
      const exact = await h.createKey({ budgetLimit: String(floor) });
      const ok = await postChat(h, { model: CHAT_MODEL, messages: HELLO, max_tokens: 500 }, { token: exact.token });
      expect([ok.status, ok.headers.get("x-output-cap"), ok.headers.get("x-output-cap-reason")]).toEqual([200, "1", "budget"]);
      expect(stub().bodies.at(-1)!.max_tokens).toBe(1);
      await ok.arrayBuffer();
    },
    stubbed,
  );

  test(
    "50 concurrent streams on a key that fits ~10 quotes: never over the limit, no 402 while the floor fits, used = sum of receipts",
    async (h) => {
      const messages = [{ role: "user", content: "race" }];
      const prompt = bound(await promptCount(messages));
      const quote = BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: 60 }));
      const floor = BigInt(await meterChat(h, { promptTokens: prompt, completionTokens: 1 }));
      const limit = quote * 10n + quote / 2n;
      const key = await h.createKey({ budgetLimit: limit.toString() });
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const res = await postChat(h, { model: CHAT_MODEL, messages, stream: true, max_completion_tokens: 60 }, { token: key.token });
          if (res.status === 402) return { refused: (await res.json()).error };
          expect(res.status).toBe(200);
          return { receipt: streamReceipt(await readEvents(res)), reason: res.headers.get("x-output-cap-reason") };
        }),
      );
      let sum = 0n;
      for (const o of outcomes) {
        if ("refused" in o) {
          expect(o.refused.code).toBe("budget_exhausted");
          expect(BigInt(o.refused.details.budgetRemaining)).toBeLessThan(BigInt(o.refused.details.required));
          expect(BigInt(o.refused.details.required)).toBe(floor);
        } else sum += BigInt(o.receipt.finalAmountWei);
      }
      const served = outcomes.filter((o) => "receipt" in o).length;
      expect(served).toBeGreaterThanOrEqual(10);
      const s = await spent(h, key);
      expect(s).toEqual({ used: sum.toString(), reserved: "0" });
      expect(BigInt(s.used)).toBeLessThanOrEqual(limit);
    },
    () => ({ media: { providers: { local: { type: "local", chatChunkDelayMs: 2 } } } }),
  );
}
