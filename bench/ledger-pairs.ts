/** Timed reserve + settle pairs, shared by the parts of `npm run bench:ledger`. */
import type { Store } from "@tollgate/core";
import { now } from "./lib.js";

/** Pairs done in the timed phase, their rate, and the benchmark process's CPU per pair in it. */
export interface Result {
  pairs: number;
  perSecond: number;
  cpuUs: number;
}

/** The pair runners for `seconds` of timed load, on keys of `owner`. */
export function pairsTimer(seconds: number, owner: string) {
  /** Runs `pair` from `workers` concurrent loops for `seconds` after 200 sequential warm-up pairs. */
  async function timed(pair: (i: number) => Promise<void> | void, workers = 1): Promise<Result> {
    let seq = 0;
    for (let i = 0; i < 200; i++) await pair(seq++);
    const start = now();
    const cpu = process.cpuUsage();
    const deadline = start + BigInt(seconds * 1e9);
    let pairs = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (now() < deadline) {
          await pair(seq++);
          pairs++;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { pairs, perSecond: pairs / (Number(now() - start) / 1e9), cpuUs: (used.user + used.system) / pairs };
  }

  /** `reserve` + `settle` (with its charge) on a new key of `store` with a huge budget, from `workers` loops. */
  async function viaStore(store: Store, workers: number): Promise<Result> {
    const keyId = `key_bench_${workers}`;
    const t0 = Date.now();
    await store.insertKey({
      keyId,
      tokenHash: keyId.padEnd(64, "0"),
      owner,
      chainId: 8453,
      purpose: "api",
      budgetLimit: 10n ** 15n,
      budgetUsed: 0n,
      budgetReserved: 0n,
      createdAt: t0,
      expiresAt: t0 + 86_400_000,
    });
    return timed(async (i) => {
      const t = Date.now();
      const id = `${workers}_${i}`;
      const r = await store.reserve({
        intent: { intentId: `pi_${id}`, keyId, maxAmount: 1000n, fingerprint: "f", request: {}, createdAt: t, expiresAt: t + 900_000 },
        now: t,
      });
      if (!r.ok) throw new Error(r.reason);
      const s = await store.settle({
        intentId: `pi_${id}`,
        finalAmount: 700n,
        result: {},
        now: t,
        charge: { chargeId: `ch_${id}`, intentId: `pi_${id}`, keyId, owner, chainId: 8453, amount: 700n, status: "queued", createdAt: t },
      });
      if (!s.ok) throw new Error(s.reason);
    }, workers);
  }

  return { timed, viaStore };
}
