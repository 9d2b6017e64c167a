/** Conformance tests of {@link LedgerStore}: reserve, settle, abort, expiry, direct charges, amounts. */
import { expect } from "vitest";
import { MAX_AMOUNT } from "@tollgate/core";
import { addKey, makeCharge, makeIntent, makeVideoJob, mustGetKey, reserveOk, T0, type StoreTest } from "./store-fixtures.js";

const TTL = 15 * 60_000;

export const ledgerTests = {
  "reserve inserts an authorized intent and reserves maxAmount": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const input = makeIntent(key.keyId, 60n, { idempotencyKey: "idem-1", request: { service: "s", nested: { a: [1, "2"] } } });
    const r = await store.reserve({ intent: input, now: T0 + 5 });
    expect(r).toMatchObject({
      ok: true,
      intent: { ...input, owner: key.owner, chainId: key.chainId, status: "authorized" },
      key: { keyId: key.keyId, budgetLimit: 100n, budgetUsed: 0n, budgetReserved: 60n },
    });
    expect(r.ok && r.intent).toEqual({ ...input, owner: key.owner, chainId: key.chainId, status: "authorized" });
    expect(await store.getIntent(input.intentId)).toEqual(r.ok && r.intent);
    expect(await store.getKeyById(key.keyId)).toEqual({ ...key, budgetReserved: 60n, lastUsedAt: T0 + 5 });
    // An exact fit succeeds; one more unit does not.
    await reserveOk(store, key.keyId, 40n);
    const over = await store.reserve({ intent: makeIntent(key.keyId, 1n), now: T0 });
    expect(over).toMatchObject({ ok: false, reason: "budget_exhausted", key: { budgetReserved: 100n } });
    // A zero reservation fits even a full budget.
    await reserveOk(store, key.keyId, 0n);
  },

  "reserve reports key_not_found, key_revoked and key_expired without reserving": async ({ store }) => {
    expect(await store.reserve({ intent: makeIntent("key_unknown", 1n), now: T0 })).toEqual({ ok: false, reason: "key_not_found" });
    const revoked = await addKey(store);
    await store.revokeKey(revoked.keyId, T0);
    expect(await store.reserve({ intent: makeIntent(revoked.keyId, 1n), now: T0 })).toMatchObject({ ok: false, reason: "key_revoked", key: { budgetReserved: 0n } });
    const expiring = await addKey(store, { expiresAt: T0 + 100 });
    await reserveOk(store, expiring.keyId, 1n, {}, T0 + 99);
    expect(await store.reserve({ intent: makeIntent(expiring.keyId, 1n), now: T0 + 100 })).toMatchObject({ ok: false, reason: "key_expired", key: { budgetReserved: 1n } });
  },

  "an idempotent reserve returns the same intent and reserves once": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10n });
    const other = await addKey(store, { budgetLimit: 10n });
    const first = await reserveOk(store, key.keyId, 10n, { idempotencyKey: "same", fingerprint: "fp-a" });
    // The budget is now full, yet the replay is still answered.
    const again = await store.reserve({ intent: makeIntent(key.keyId, 10n, { idempotencyKey: "same", fingerprint: "fp-b" }), now: T0 + 1 });
    expect(again).toMatchObject({ ok: false, reason: "idempotent_replay", intent: { intentId: first, fingerprint: "fp-a", status: "authorized" }, key: { budgetReserved: 10n } });
    // Idempotency keys are scoped to one key.
    await reserveOk(store, other.keyId, 10n, { idempotencyKey: "same" });
    expect((await mustGetKey(store, key.keyId)).budgetReserved).toBe(10n);
    // A finished intent is replayed too, in its current state.
    await store.abort({ intentId: first, reason: "done", result: { r: 1 }, now: T0 + 2 });
    expect(await store.reserve({ intent: makeIntent(key.keyId, 1n, { idempotencyKey: "same" }), now: T0 + 3 })).toMatchObject({ ok: false, reason: "idempotent_replay", intent: { intentId: first, status: "aborted" } });
  },

  "settle moves the reservation to used, releases the rest and queues the charge": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const id = await reserveOk(store, key.keyId, 70n);
    const charge = makeCharge(key, 60n, { intentId: id, createdAt: T0 + 10 });
    const result = { paymentIntentId: id, status: "settled", finalAmountWei: "60" };
    const r = await store.settle({ intentId: id, finalAmount: 60n, result, now: T0 + 10, charge });
    expect(r).toEqual({ ok: true, key: expect.objectContaining({ keyId: key.keyId, budgetLimit: 100n, budgetUsed: 60n, budgetReserved: 0n }) });
    expect(await store.getIntent(id)).toMatchObject({ status: "settled", maxAmount: 70n, finalAmount: 60n, releasedAmount: 10n, result, finishedAt: T0 + 10 });
    expect(await store.getCharge(charge.chargeId)).toEqual(charge);
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 60n, count: 1 });
    // A zero settle queues nothing.
    const zero = await reserveOk(store, key.keyId, 5n);
    const none = makeCharge(key, 0n, { intentId: zero });
    expect(await store.settle({ intentId: zero, finalAmount: 0n, result: { ok: 1 }, now: T0 + 11, charge: none })).toMatchObject({ ok: true });
    expect(await store.getIntent(zero)).toMatchObject({ finalAmount: 0n, releasedAmount: 5n });
    expect(await store.getCharge(none.chargeId)).toBeNull();
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 60n, budgetReserved: 0n });
  },

  "settle with a videoJob inserts the job in the same step; a settle whose guard fails inserts none": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const id = await reserveOk(store, key.keyId, 10n);
    const job = makeVideoJob();
    const charge = makeCharge(key, 5n, { intentId: id });
    expect(await store.settle({ intentId: id, finalAmount: 5n, result: { job: job.id }, now: T0 + 1, charge, videoJob: job })).toMatchObject({ ok: true });
    expect(await store.getIntent(id)).toMatchObject({ status: "settled" });
    expect(await store.getVideoJob(job.id)).toEqual(job);
    expect(await store.getCharge(charge.chargeId)).toEqual(charge);

    // Each guard miss: settled already, above the reservation, overdue, unknown.
    const open = await reserveOk(store, key.keyId, 10n);
    const overdue = await reserveOk(store, key.keyId, 10n, { expiresAt: T0 + 10 });
    const misses = [
      { intentId: id, finalAmount: 5n },
      { intentId: open, finalAmount: 11n },
      { intentId: overdue, finalAmount: 1n },
      { intentId: "pi_unknown", finalAmount: 1n },
    ];
    const reasons: string[] = [];
    for (const miss of misses) {
      const videoJob = makeVideoJob();
      const r = await store.settle({ ...miss, result: {}, now: T0 + 10, videoJob });
      reasons.push(r.ok ? "ok" : r.reason);
      expect(await store.getVideoJob(videoJob.id), miss.intentId).toBeNull();
    }
    expect(reasons).toEqual(["invalid_state", "exceeds_reservation", "expired", "not_found"]);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 5n, budgetReserved: 10n });
  },

  "20 concurrent settles of one intent, each with its own videoJob: exactly one wins and one job is inserted": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const id = await reserveOk(store, key.keyId, 10n);
    const jobs = Array.from({ length: 20 }, () => makeVideoJob());
    const results = await Promise.all(jobs.map((videoJob, i) => store.settle({ intentId: id, finalAmount: BigInt(i % 10), result: { i }, now: T0 + 1, videoJob })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const found = (await Promise.all(jobs.map((j) => store.getVideoJob(j.id)))).filter((j) => j !== null);
    expect(found.map((j) => j.id)).toEqual([jobs[results.findIndex((r) => r.ok)]!.id]);
  },

  "a settle whose videoJob id exists rejects and changes nothing (no settle, no charge)": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const id = await reserveOk(store, key.keyId, 10n);
    const existing = makeVideoJob();
    await store.insertVideoJob(existing);
    const before = await store.getIntent(id);
    const charge = makeCharge(key, 5n, { intentId: id });
    await expect(store.settle({ intentId: id, finalAmount: 5n, result: {}, now: T0 + 1, charge, videoJob: makeVideoJob({ id: existing.id, model: "other" }) })).rejects.toThrow();
    expect(await store.getIntent(id)).toEqual(before);
    expect(await store.getCharge(charge.chargeId)).toBeNull();
    expect(await store.getVideoJob(existing.id)).toEqual(existing);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: 10n });
    // The same settle with a fresh job then goes through.
    expect(await store.settle({ intentId: id, finalAmount: 5n, result: {}, now: T0 + 2, charge, videoJob: makeVideoJob() })).toMatchObject({ ok: true });
  },

  "settling twice is a guard miss that returns the settled intent": async ({ store }) => {
    const key = await addKey(store);
    const id = await reserveOk(store, key.keyId, 50n);
    await store.settle({ intentId: id, finalAmount: 20n, result: { first: true }, now: T0 + 1 });
    const again = await store.settle({ intentId: id, finalAmount: 30n, result: { first: false }, now: T0 + 2 });
    expect(again).toMatchObject({ ok: false, reason: "invalid_state", intent: { status: "settled", finalAmount: 20n, result: { first: true }, finishedAt: T0 + 1 } });
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 20n, budgetReserved: 0n });
  },

  "settle above the reservation is refused and changes nothing": async ({ store }) => {
    const key = await addKey(store);
    const id = await reserveOk(store, key.keyId, 50n);
    const before = await store.getIntent(id);
    expect(await store.settle({ intentId: id, finalAmount: 51n, result: {}, now: T0 + 1, charge: makeCharge(key, 51n) })).toEqual({ ok: false, reason: "exceeds_reservation", intent: before });
    expect(await store.getIntent(id)).toEqual(before);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: 50n });
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 0n, count: 0 });
    expect(await store.settle({ intentId: id, finalAmount: 50n, result: {}, now: T0 + 2 })).toMatchObject({ ok: true });
    expect(await store.getIntent(id)).toMatchObject({ releasedAmount: 0n });
  },

  "abort releases the reservation once; no state move after a finish": async ({ store }) => {
    const key = await addKey(store);
    const id = await reserveOk(store, key.keyId, 40n);
    const r = await store.abort({ intentId: id, reason: "upstream_failed", result: { status: "aborted" }, now: T0 + 3 });
    expect(r).toMatchObject({ ok: true, key: { keyId: key.keyId, budgetUsed: 0n, budgetReserved: 0n } });
    expect(await store.getIntent(id)).toMatchObject({ status: "aborted", reason: "upstream_failed", releasedAmount: 40n, result: { status: "aborted" }, finishedAt: T0 + 3 });
    expect(await store.abort({ intentId: id, reason: "again", result: {}, now: T0 + 4 })).toMatchObject({ ok: false, reason: "invalid_state", intent: { status: "aborted", reason: "upstream_failed" } });
    expect(await store.settle({ intentId: id, finalAmount: 1n, result: {}, now: T0 + 4 })).toMatchObject({ ok: false, reason: "invalid_state", intent: { status: "aborted" } });
    const settled = await reserveOk(store, key.keyId, 40n);
    await store.settle({ intentId: settled, finalAmount: 40n, result: {}, now: T0 + 5 });
    expect(await store.abort({ intentId: settled, reason: "late", result: {}, now: T0 + 6 })).toMatchObject({ ok: false, reason: "invalid_state", intent: { status: "settled" } });
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 40n, budgetReserved: 0n });
  },

  "an unknown intent is not_found for settle and abort, null for getIntent": async ({ store }) => {
    expect(await store.settle({ intentId: "pi_unknown", finalAmount: 1n, result: {}, now: T0 })).toEqual({ ok: false, reason: "not_found" });
    expect(await store.abort({ intentId: "pi_unknown", reason: "x", result: {}, now: T0 })).toEqual({ ok: false, reason: "not_found" });
    expect(await store.getIntent("pi_unknown", T0)).toBeNull();
  },

  "an intent past expiresAt is expired by settle, abort and getIntent, releasing it": async ({ store }) => {
    const key = await addKey(store);
    const a = await reserveOk(store, key.keyId, 10n, { expiresAt: T0 + 1000 });
    const b = await reserveOk(store, key.keyId, 20n, { expiresAt: T0 + 1000 });
    const c = await reserveOk(store, key.keyId, 30n, { expiresAt: T0 + 1000 });
    // One millisecond before expiry it still settles.
    expect(await store.settle({ intentId: a, finalAmount: 1n, result: {}, now: T0 + 999 })).toMatchObject({ ok: true });
    expect(await store.abort({ intentId: b, reason: "x", result: {}, now: T0 + 1000 })).toMatchObject({ ok: false, reason: "expired", intent: { status: "expired", releasedAmount: 20n, finishedAt: T0 + 1000 } });
    expect(await store.getIntent(c)).toMatchObject({ status: "authorized" });
    expect(await store.getIntent(c, T0 + 999)).toMatchObject({ status: "authorized" });
    expect(await store.getIntent(c, T0 + 1500)).toMatchObject({ status: "expired", releasedAmount: 30n, finishedAt: T0 + 1500 });
    expect(await store.settle({ intentId: c, finalAmount: 1n, result: {}, now: T0 + 2000 })).toMatchObject({ ok: false, reason: "invalid_state", intent: { status: "expired" } });
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 1n, budgetReserved: 0n });
    const d = await reserveOk(store, key.keyId, 5n, { expiresAt: T0 + 3000 });
    expect(await store.settle({ intentId: d, finalAmount: 1n, result: {}, now: T0 + 3000 })).toMatchObject({ ok: false, reason: "expired", intent: { status: "expired" } });
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 1n, budgetReserved: 0n });
  },

  "expired reservations never block a new reserve (release on read)": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const old = await reserveOk(store, key.keyId, 100n, { expiresAt: T0 + 1000 });
    expect(await store.reserve({ intent: makeIntent(key.keyId, 1n), now: T0 + 999 })).toMatchObject({ ok: false, reason: "budget_exhausted" });
    const r = await store.reserve({ intent: makeIntent(key.keyId, 100n, { createdAt: T0 + 1000, expiresAt: T0 + 1000 + TTL }), now: T0 + 1000 });
    expect(r).toMatchObject({ ok: true, key: { budgetReserved: 100n } });
    expect(await store.getIntent(old)).toMatchObject({ status: "expired", releasedAmount: 100n });
    // chargeDirect releases on read as well.
    const k2 = await addKey(store, { budgetLimit: 10n });
    await reserveOk(store, k2.keyId, 10n, { expiresAt: T0 + 50 });
    expect(await store.chargeDirect({ keyId: k2.keyId, amount: 10n, now: T0 + 50 })).toMatchObject({ ok: true, key: { budgetUsed: 10n, budgetReserved: 0n } });
  },

  "a reserve that fits leaves the key's overdue intents to the sweeper; one that fits only without them expires them first": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const overdue = await reserveOk(store, key.keyId, 60n, { expiresAt: T0 + 10 });
    const at = T0 + 20;
    // 30 fits beside the overdue 60: the hot path reads no intent, so the 60 stays held until swept.
    const fits = await store.reserve({ intent: makeIntent(key.keyId, 30n, { createdAt: at, expiresAt: at + TTL }), now: at });
    expect(fits).toMatchObject({ ok: true, key: { budgetReserved: 90n } });
    expect(await store.getIntent(overdue)).toMatchObject({ status: "authorized" });
    // 50 fits only once the overdue 60 is released: the same reserve expires it and takes the amount.
    const after = await store.reserve({ intent: makeIntent(key.keyId, 50n, { createdAt: at, expiresAt: at + TTL }), now: at });
    expect(after).toMatchObject({ ok: true, key: { budgetReserved: 80n, budgetUsed: 0n } });
    expect(await store.getIntent(overdue)).toMatchObject({ status: "expired", releasedAmount: 60n, finishedAt: at });
    // Nothing overdue is left to release: a reserve that does not fit is refused and changes nothing.
    expect(await store.reserve({ intent: makeIntent(key.keyId, 21n, { createdAt: at, expiresAt: at + TTL }), now: at })).toMatchObject({
      ok: false,
      reason: "budget_exhausted",
      key: { budgetReserved: 80n },
    });
    expect(await store.expireIntents(at, 100)).toBe(0);
  },

  "expireIntents sweeps up to limit overdue intents, oldest expiry first": async ({ store }) => {
    const k1 = await addKey(store);
    const k2 = await addKey(store);
    const ids = [
      await reserveOk(store, k1.keyId, 1n, { expiresAt: T0 + 500 }),
      await reserveOk(store, k2.keyId, 2n, { expiresAt: T0 + 100 }),
      await reserveOk(store, k1.keyId, 4n, { expiresAt: T0 + 300 }),
      await reserveOk(store, k2.keyId, 8n, { expiresAt: T0 + 400 }),
      await reserveOk(store, k1.keyId, 16n, { expiresAt: T0 + 2000 }),
    ];
    expect(await store.expireIntents(T0 + 1000, 3)).toBe(3);
    const statuses = await Promise.all(ids.map(async (id) => (await store.getIntent(id))?.status));
    expect(statuses).toEqual(["authorized", "expired", "expired", "expired", "authorized"]);
    expect(await mustGetKey(store, k1.keyId)).toMatchObject({ budgetReserved: 17n });
    expect(await mustGetKey(store, k2.keyId)).toMatchObject({ budgetReserved: 0n });
    expect(await store.expireIntents(T0 + 1000, 10)).toBe(1);
    expect(await store.expireIntents(T0 + 1000, 10)).toBe(0);
    expect(await mustGetKey(store, k1.keyId)).toMatchObject({ budgetReserved: 16n, budgetUsed: 0n });
  },

  "releaseOverdueIntents expires only the given keys' overdue intents and releases them once": async ({ store }) => {
    const k1 = await addKey(store, { budgetLimit: 100n });
    const k2 = await addKey(store, { budgetLimit: 100n });
    const k3 = await addKey(store, { budgetLimit: 100n });
    const a = await reserveOk(store, k1.keyId, 10n, { expiresAt: T0 + 100 });
    const b = await reserveOk(store, k1.keyId, 20n, { expiresAt: T0 + 2000 });
    const c = await reserveOk(store, k2.keyId, 30n, { expiresAt: T0 + 100 });
    const d = await reserveOk(store, k3.keyId, 40n, { expiresAt: T0 + 100 });
    expect(await store.releaseOverdueIntents([], T0 + 1000)).toBe(0);
    expect(await store.releaseOverdueIntents([k1.keyId, k2.keyId], T0 + 99)).toBe(0);
    expect(await store.releaseOverdueIntents([k1.keyId, k2.keyId, k1.keyId, "key_unknown"], T0 + 1000)).toBe(2);
    expect(await store.getIntent(a)).toMatchObject({ status: "expired", releasedAmount: 10n, finishedAt: T0 + 1000 });
    expect(await store.getIntent(b)).toMatchObject({ status: "authorized" });
    expect(await store.getIntent(c)).toMatchObject({ status: "expired", releasedAmount: 30n });
    expect(await store.getIntent(d)).toMatchObject({ status: "authorized" }); // not asked for
    expect(await mustGetKey(store, k1.keyId)).toMatchObject({ budgetReserved: 20n, budgetUsed: 0n });
    expect(await mustGetKey(store, k2.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 0n });
    expect(await mustGetKey(store, k3.keyId)).toMatchObject({ budgetReserved: 40n });
    expect(await store.releaseOverdueIntents([k1.keyId, k2.keyId], T0 + 1000)).toBe(0);
    // Concurrent callers over overlapping keys: each overdue intent is released exactly once.
    const k4 = await addKey(store, { budgetLimit: 1000n });
    for (let i = 0; i < 5; i++) await reserveOk(store, k4.keyId, 7n, { expiresAt: T0 + 100 + i });
    const counts = await Promise.all(Array.from({ length: 8 }, (_, i) => store.releaseOverdueIntents(i % 2 ? [k4.keyId, k3.keyId] : [k3.keyId, k4.keyId], T0 + 5000)));
    expect(counts.reduce((x, y) => x + y, 0)).toBe(6);
    expect(await mustGetKey(store, k4.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 0n });
    expect(await mustGetKey(store, k3.keyId)).toMatchObject({ budgetReserved: 0n });
    expect(await store.getIntent(d)).toMatchObject({ status: "expired", releasedAmount: 40n });
  },

  "chargeDirect adds to used at once and queues the charge": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 100n });
    const charge = makeCharge(key, 60n);
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 60n, now: T0 + 7, charge })).toEqual({ ok: true, key: { ...key, budgetUsed: 60n, lastUsedAt: T0 + 7 } });
    expect(await store.getCharge(charge.chargeId)).toEqual(charge);
    await reserveOk(store, key.keyId, 30n);
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 11n, now: T0, charge: makeCharge(key, 11n) })).toMatchObject({ ok: false, reason: "budget_exhausted", key: { budgetUsed: 60n, budgetReserved: 30n } });
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 10n, now: T0 })).toMatchObject({ ok: true, key: { budgetUsed: 70n } });
    expect(await store.chargeDirect({ keyId: "key_unknown", amount: 1n, now: T0 })).toEqual({ ok: false, reason: "key_not_found" });
    await store.revokeKey(key.keyId, T0 + 8);
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 0n, now: T0 + 9 })).toMatchObject({ ok: false, reason: "key_revoked" });
    const expired = await addKey(store, { expiresAt: T0 });
    expect(await store.chargeDirect({ keyId: expired.keyId, amount: 0n, now: T0 })).toMatchObject({ ok: false, reason: "key_expired" });
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 60n, count: 1 });
  },

  "amounts above 2^53 reserve, settle and charge exactly": async ({ store }) => {
    const big = 2n ** 60n;
    const key = await addKey(store, { budgetLimit: big + 12345n });
    const id = await reserveOk(store, key.keyId, big + 12000n);
    expect(await store.reserve({ intent: makeIntent(key.keyId, 346n), now: T0 })).toMatchObject({ ok: false, reason: "budget_exhausted" });
    const charge = makeCharge(key, big + 11999n, { intentId: id });
    expect(await store.settle({ intentId: id, finalAmount: big + 11999n, result: { finalAmountWei: (big + 11999n).toString() }, now: T0 + 1, charge })).toMatchObject({
      ok: true,
      key: { budgetUsed: big + 11999n, budgetReserved: 0n },
    });
    expect(await store.getIntent(id)).toMatchObject({ finalAmount: big + 11999n, releasedAmount: 1n });
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 346n, now: T0 + 2 })).toMatchObject({ ok: true, key: { budgetUsed: big + 12345n } });
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: big + 11999n, count: 1 });
    expect((await store.getCharge(charge.chargeId))?.amount).toBe(big + 11999n);
  },

  "a budget of exactly maxAmount is exact to the last unit": async ({ store }) => {
    const max = store.maxAmount;
    const key = await addKey(store, { budgetLimit: max });
    const id = await reserveOk(store, key.keyId, max);
    expect(await store.reserve({ intent: makeIntent(key.keyId, 1n), now: T0 })).toMatchObject({ ok: false, reason: "budget_exhausted", key: { budgetReserved: max } });
    expect(await store.settle({ intentId: id, finalAmount: max - 1n, result: {}, now: T0 + 1, charge: makeCharge(key, max - 1n, { intentId: id }) })).toMatchObject({ ok: true, key: { budgetUsed: max - 1n, budgetReserved: 0n } });
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 2n, now: T0 + 2 })).toMatchObject({ ok: false, reason: "budget_exhausted" });
    expect(await store.chargeDirect({ keyId: key.keyId, amount: 1n, now: T0 + 2 })).toMatchObject({ ok: true, key: { budgetUsed: max } });
  },

  "amounts above maxAmount are guard misses or refusals, never a wrap-around": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: store.maxAmount });
    const above = store.maxAmount + 1n;
    const id = await reserveOk(store, key.keyId, 10n);
    if (store.maxAmount < MAX_AMOUNT) {
      // A store with a narrower range answers as the guard would: nothing that large fits.
      expect(await store.reserve({ intent: makeIntent(key.keyId, above), now: T0 })).toMatchObject({ ok: false, reason: "budget_exhausted" });
      expect(await store.chargeDirect({ keyId: key.keyId, amount: above, now: T0 })).toMatchObject({ ok: false, reason: "budget_exhausted" });
      expect(await store.settle({ intentId: id, finalAmount: above, result: {}, now: T0 })).toMatchObject({ ok: false, reason: "exceeds_reservation" });
    } else {
      await expect(store.reserve({ intent: makeIntent(key.keyId, above), now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
      await expect(store.chargeDirect({ keyId: key.keyId, amount: above, now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
      await expect(store.settle({ intentId: id, finalAmount: above, result: {}, now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
    }
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: 10n });
  },

  "negative amounts are refused with invalid_request": async ({ store }) => {
    const key = await addKey(store);
    const id = await reserveOk(store, key.keyId, 10n);
    await expect(store.reserve({ intent: makeIntent(key.keyId, -1n), now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(store.settle({ intentId: id, finalAmount: -1n, result: {}, now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(store.chargeDirect({ keyId: key.keyId, amount: -1n, now: T0 })).rejects.toMatchObject({ code: "invalid_request" });
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: 10n });
  },
} satisfies Record<string, StoreTest>;
