/** Conformance races: N concurrent callers where exactly K can win. */
import { expect } from "vitest";
import { addKey, expectBudgetInvariant, makeIntent, mustGetKey, reserveOk, seededRandom, shuffle, T0, type StoreTest } from "./store-fixtures.js";

export const raceTests = {
  "200 concurrent reserves of 7 against room for 100: exactly 100 win, then settle/abort keeps the budget invariant": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 706n });
    const results = await Promise.all(Array.from({ length: 200 }, () => store.reserve({ intent: makeIntent(key.keyId, 7n), now: T0 })));
    const won = results.flatMap((r) => (r.ok ? [r.intent.intentId] : []));
    expect(won).toHaveLength(100);
    expect(results.filter((r) => !r.ok && r.reason === "budget_exhausted")).toHaveLength(100);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 700n, budgetUsed: 0n });

    const random = seededRandom(42);
    let settled = 0n;
    for (const id of shuffle(won, random)) {
      if (random() < 0.7) {
        const final = BigInt(Math.floor(random() * 8));
        const r = await store.settle({ intentId: id, finalAmount: final, result: { final: final.toString() }, now: T0 + 1 });
        expect(r.ok).toBe(true);
        settled += final;
      } else {
        expect((await store.abort({ intentId: id, reason: "test", result: {}, now: T0 + 1 })).ok).toBe(true);
      }
      expectBudgetInvariant(await mustGetKey(store, key.keyId));
    }
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: settled });
  },

  "20 concurrent reserves with one idempotency key: one intent, reserved once": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n });
    const results = await Promise.all(Array.from({ length: 20 }, () => store.reserve({ intent: makeIntent(key.keyId, 9n, { idempotencyKey: "once" }), now: T0 })));
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(1);
    const id = ok[0]?.ok ? ok[0].intent.intentId : undefined;
    const ids = new Set(results.map((r) => ("intent" in r ? r.intent.intentId : undefined)));
    expect([...ids]).toEqual([id]);
    expect(results.filter((r) => !r.ok && r.reason === "idempotent_replay")).toHaveLength(19);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 9n });
  },

  "50 concurrent direct charges of 10 against 255: exactly 25 win": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 255n });
    const results = await Promise.all(Array.from({ length: 50 }, () => store.chargeDirect({ keyId: key.keyId, amount: 10n, now: T0 })));
    expect(results.filter((r) => r.ok)).toHaveLength(25);
    expect(results.filter((r) => !r.ok && r.reason === "budget_exhausted")).toHaveLength(25);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 250n, budgetReserved: 0n });
  },

  "concurrent settles and aborts of one intent: exactly one wins": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const id = await reserveOk(store, key.keyId, 50n);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? store.settle({ intentId: id, finalAmount: BigInt(i), result: { i }, now: T0 + 1 })
          : store.abort({ intentId: id, reason: `r${i}`, result: { i }, now: T0 + 1 }),
      ),
    );
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "invalid_state")).toHaveLength(19);
    const won = await store.getIntent(id);
    // The winner's own call: a settle of i stored finalAmount i, an abort stored its reason.
    const winner = results.indexOf(winners[0]!);
    expect(won).toMatchObject(winner % 2 === 0 ? { status: "settled", finalAmount: BigInt(winner) } : { status: "aborted", reason: `r${winner}` });
    const final = won?.finalAmount ?? 0n;
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: final, budgetReserved: 0n });
  },

  "concurrent sweeps expire each intent once": async ({ store }) => {
    const key = await addKey(store);
    for (let i = 0; i < 30; i++) await reserveOk(store, key.keyId, 3n, { expiresAt: T0 + 10 });
    const counts = await Promise.all(Array.from({ length: 5 }, () => store.expireIntents(T0 + 10, 8)));
    const more = await store.expireIntents(T0 + 10, 100);
    expect(counts.reduce((a, b) => a + b, 0) + more).toBe(30);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 0n });
  },
} satisfies Record<string, StoreTest>;
