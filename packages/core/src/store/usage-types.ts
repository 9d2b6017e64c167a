/** The usage read of the Store: a wallet's spend from the ledger, by UTC day and by model. */

/** The spend of one (UTC day, model) pair: the charges of a wallet's keys created that day for that model. */
export interface UsageCell {
  /** 00:00:00.000 UTC of the day, in ms since the epoch. */
  dayStart: number;
  /**
   * The catalog model the charge paid for (the `modelId` the ledger recorded in its intent's
   * request at prepare); null for a charge without one (a `maxAmountWei` prepare that named no
   * model, a caller-priced meter, the legacy key settle).
   */
  modelId: string | null;
  /** Sum of the charges' amounts, exact (no float touches it). */
  spent: bigint;
  /** How many charges. */
  calls: number;
}

/** Outcome of {@link UsageStore.usageByWallet}. */
export interface WalletUsageRecord {
  /** One cell per (day, model) pair that has at least one charge; in no particular order. */
  cells: UsageCell[];
  /** Sum of `maxAmount` of the wallet's authorized intents with `expiresAt > now` (open reservations). */
  reserved: bigint;
}

/** Reads a wallet's spend. */
export interface UsageStore {
  /**
   * The charges of every key of `wallet` (ChargeRecord.owner; optionally of one chain) with
   * `fromMs <= createdAt < toMs`, whatever their on-chain settlement status, grouped by UTC day
   * of `createdAt` and by model; and the budget held now by the wallet's open reservations (on
   * that chain when given) — authorized intents not yet past `expiresAt` at `now`, whether or not
   * they are in the range. A read: nothing is expired or released. Sums are exact for any number
   * of charges a store can hold. A store may rely on no intent living longer than
   * `MAX_INTENT_LIFETIME_MS` (the ledger service's bound): a key revoked or expired before
   * `heldKeysSince(now)` holds no open reservation, and the SQL stores read only the others.
   */
  usageByWallet(input: { wallet: string; chainId?: number; fromMs: number; toMs: number; now: number }): Promise<WalletUsageRecord>;
}
