/**
 * {@link UsageStore} on the memory store: a scan of its charges and of its authorized intents.
 * Synchronous, so it reads one consistent state.
 */
import type { ChargeRecord, IntentRecord } from "./types.js";
import type { UsageCell, UsageStore } from "./usage-types.js";

const DAY_MS = 86_400_000;

/** The `modelId` the ledger recorded in an intent's request, or null. */
function recordedModel(intent: IntentRecord | undefined): string | null {
  const request = intent?.request;
  if (typeof request !== "object" || request === null) return null;
  const modelId = (request as { modelId?: unknown }).modelId;
  return typeof modelId === "string" ? modelId : null;
}

/**
 * The usage read over the memory store's maps (the live maps, not copies: it only reads).
 * `authorized`: keyId → ids of its authorized intents.
 */
export function createMemoryUsage(state: {
  charges: ReadonlyMap<string, ChargeRecord>;
  intents: ReadonlyMap<string, IntentRecord>;
  authorized: ReadonlyMap<string, ReadonlySet<string>>;
}): UsageStore {
  return {
    async usageByWallet({ wallet, chainId, fromMs, toMs, now }) {
      const cells = new Map<string, UsageCell>();
      for (const c of state.charges.values()) {
        if (c.owner !== wallet || (chainId !== undefined && c.chainId !== chainId) || c.createdAt < fromMs || c.createdAt >= toMs) continue;
        const dayStart = Math.floor(c.createdAt / DAY_MS) * DAY_MS;
        const modelId = recordedModel(c.intentId === undefined ? undefined : state.intents.get(c.intentId));
        const slot = JSON.stringify([dayStart, modelId]);
        const cell = cells.get(slot);
        if (cell) {
          cell.spent += c.amount;
          cell.calls += 1;
        } else cells.set(slot, { dayStart, modelId, spent: c.amount, calls: 1 });
      }
      let reserved = 0n;
      for (const ids of state.authorized.values()) {
        for (const id of ids) {
          const i = state.intents.get(id);
          if (i && i.owner === wallet && (chainId === undefined || i.chainId === chainId) && i.status === "authorized" && i.expiresAt > now)
            reserved += i.maxAmount;
        }
      }
      return { cells: [...cells.values()], reserved };
    },
  };
}
