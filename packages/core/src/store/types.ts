/**
 * The Store port: async, made of domain-level operations, one sub-interface per capability.
 * Every guarded operation is atomic on its own; no generic transaction leaks out. Each backend
 * implements atomicity its own way (memory: no `await` between read and write; SQLite: one
 * `BEGIN IMMEDIATE` transaction around a conditional UPDATE). Every store passes
 * `runStoreConformance` from `@tollgate/testing`.
 *
 * Conventions: amounts are bigint atomic units, timestamps are milliseconds since the epoch,
 * addresses are lower-case strings. Records returned are copies; mutating them changes nothing.
 */

import type { FeedbackStore } from "./feedback-types.js";
import type { AgentStore } from "./agents-types.js";
import type { DispenserStore } from "./dispenser-types.js";
import type { VideoStore } from "./video-types.js";
import type { PaymentNonceStore } from "./x402-types.js";
import type { TranscriptRestStore } from "./transcript-rest-types.js";
import type { AuthStore } from "./auth-types.js";
import type { UsageStore } from "./usage-types.js";
import type { HealthStore } from "./health-types.js";
import type { ChargeRecord, ChargeStore } from "./charge-types.js";
import type { VideoJobRecord } from "./video-types.js";
import type { ChargeDirectResult, FinishResult, ReserveResult } from "./ledger-types.js";
import type { IntentListOptions, IntentListPage } from "./intent-list.js";
export type { FeedbackAggregates, FeedbackRecord, FeedbackStore, FeedbackTarget, FeedbackVerification } from "./feedback-types.js";
export type { AgentCard, AgentPlugin, AgentStore } from "./agents-types.js";
export type { BeginDispenserClaimResult, DispenserClaimRecord, DispenserClaimStatus, DispenserStore } from "./dispenser-types.js";
export type { VideoJobRecord, VideoJobStatus, VideoStore } from "./video-types.js";
export type { PaymentNonceKey, PaymentNonceRecord, PaymentNonceStore, UnsurePaymentNonce } from "./x402-types.js";
export type { TranscriptRestRecord, TranscriptRestStore } from "./transcript-rest-types.js";
export type { AuthNonceRecord, AuthStore, SessionRecord, SessionSigner } from "./auth-types.js";
export type { UsageCell, UsageStore, WalletUsageRecord } from "./usage-types.js";
export type { GroupCommitStats, HealthStore, StoreReadiness } from "./health-types.js";
export type { ChargeRecord, ChargeStatus, ChargeStore } from "./charge-types.js";

/** `session` keys are one per (owner, chain): creating one supersedes the previous. */
export type KeyPurpose = "session" | "api";

/** A budgeted service key. Only the SHA-256 of its token is stored. */
export interface KeyRecord {
  keyId: string;
  /** Lower-case hex SHA-256 of the token. */
  tokenHash: string;
  /** Lower-case wallet address. */
  owner: string;
  chainId: number;
  purpose: KeyPurpose;
  name?: string;
  budgetLimit: bigint;
  /** Settled spend. Invariant: `budgetUsed + budgetReserved <= budgetLimit`, neither negative. */
  budgetUsed: bigint;
  /** Sum of the `maxAmount` of this key's authorized intents. */
  budgetReserved: bigint;
  createdAt: number;
  /** The key is unusable once `expiresAt <= now`. */
  expiresAt: number;
  revokedAt?: number;
  /** Set by a successful `reserve` or `chargeDirect`. */
  lastUsedAt?: number;
  /** The key's own request rate limit (overrides the gateway default); absent: the default applies. */
  rateLimit?: KeyRateLimit;
  /**
   * A calendar budget window (UTC, see keys/period.ts): `budgetUsed` counts spend since
   * `periodStart`, and every guarded step that spends first rolls a lapsed window forward
   * (used 0, `periodStart` = the current window's start) in the same atomic operation.
   */
  budgetPeriod?: BudgetPeriod;
  /** Start of the window `budgetUsed` counts; set exactly when `budgetPeriod` is. */
  periodStart?: number;
  /** Models the key may pay for: exact catalog ids and `<provider>/*` patterns; absent: any. */
  models?: string[];
  /**
   * Per-model caps inside `budgetLimit`, by exact model id or `<provider>/*` pattern (the most
   * specific match applies); counted per window like the key, in {@link ModelSpendRecord}s.
   */
  modelBudgets?: Record<string, bigint>;
  /** SHA-256 of the token before the last rotation; it authenticates until `previousTokenValidUntil`. */
  previousTokenHash?: string;
  previousTokenValidUntil?: number;
}

/** A calendar budget window. */
export type BudgetPeriod = "daily" | "weekly" | "monthly";

/** The counters of one per-model cap of a key (`KeyRecord.modelBudgets`). */
export interface ModelSpendRecord {
  keyId: string;
  /** The `modelBudgets` entry: a model id or a `<provider>/*` pattern. */
  scope: string;
  /** Spend in the window starting at `periodStart` (the key's window; lifetime without a period). */
  budgetUsed: bigint;
  budgetReserved: bigint;
  periodStart?: number;
}

/** The fields a key update may change; `null` clears an optional one. */
export interface KeyPatch {
  name?: string | null;
  budgetLimit?: bigint;
  expiresAt?: number;
  /** Setting or changing a period starts a fresh window at `now` (used 0; reservations carry over). */
  budgetPeriod?: BudgetPeriod | null;
  models?: string[] | null;
  modelBudgets?: Record<string, bigint> | null;
  rateLimit?: KeyRateLimit | null;
}

/** One recorded change of a key. */
export interface KeyEventRecord {
  eventId: string;
  keyId: string;
  at: number;
  /** `update` or `rotate`. */
  type: "update" | "rotate";
  /** Who made it: `wallet:<address>` or `key:<keyId>`. */
  actor: string;
  /** Per changed field: the old and the new value (JSON-serialisable; amounts as decimal strings). */
  changes: Record<string, { from: unknown; to: unknown }>;
}

/** Outcome of {@link KeyStore.updateKey}. */
export type UpdateKeyResult =
  | { ok: true; key: KeyRecord }
  | { ok: false; reason: "not_found" }
  /** The new `budgetLimit` is below the current window's `budgetUsed + budgetReserved`; nothing changed. */
  | { ok: false; reason: "below_committed"; key: KeyRecord };

/** A per-key request rate limit. */
export interface KeyRateLimit {
  /** Requests per minute, 1..1_000_000. */
  requestsPerMinute: number;
}

export type IntentStatus = "authorized" | "settled" | "aborted" | "expired";

/** A payment intent: a reservation against a key's budget, later settled, aborted or expired. */
export interface IntentRecord {
  intentId: string;
  keyId: string;
  /** Copied from the key. */
  owner: string;
  /** Copied from the key. */
  chainId: number;
  status: IntentStatus;
  maxAmount: bigint;
  /** Set when settled. */
  finalAmount?: bigint;
  /** `maxAmount - finalAmount` when settled, `maxAmount` when aborted or expired. */
  releasedAmount?: bigint;
  /** Unique per key: a second reserve with the same one replays this intent. */
  idempotencyKey?: string;
  /** The per-model cap (`modelBudgets` scope) the reservation counts against; settle, abort and expiry update it too. */
  budgetScope?: string;
  /** Hash of the request parameters; the service compares it to detect idempotency conflicts. */
  fingerprint: string;
  /** JSON-serialisable prepare parameters (service, action, resource, method, runId, meter…; `modelId` of a catalog model paid for). */
  request: unknown;
  /** JSON-serialisable settle/abort response, stored so that a repeat replays it exactly. */
  result?: unknown;
  /** Abort reason. */
  reason?: string;
  createdAt: number;
  expiresAt: number;
  /** When it left `authorized`. */
  finishedAt?: number;
}

/** The fields of a new intent; the store sets `status`, `owner` and `chainId` (from the key). */
export type NewIntent = Pick<IntentRecord, "intentId" | "keyId" | "maxAmount" | "fingerprint" | "request" | "createdAt" | "expiresAt"> & {
  idempotencyKey?: string;
  /** A per-model cap the reservation also counts against: its scope and its limit. */
  budgetScope?: { scope: string; limit: bigint };
};

/** Keyset position in a newest-first key listing: the last key of the previous page. */
export interface KeyCursor {
  createdAt: number;
  keyId: string;
}

/** Keyset position in a newest-first intent listing: the last intent of the previous page. */
export interface IntentCursor {
  createdAt: number;
  intentId: string;
}

export type { ChargeDirectResult, FinishResult, KeyBudget, KeyGuardReason, ReserveResult } from "./ledger-types.js";

/** Service keys. */
export interface KeyStore {
  /**
   * Inserts a key. If it is a `session` key, every other session key of the same (owner, chainId)
   * that is neither revoked nor expired is revoked at `supersedeSessionAt` (default
   * `key.createdAt`) in the same step. Single native atomic operation; exactly one of N
   * concurrent session inserts for one (owner, chainId) stays unrevoked. Rejects on a duplicate
   * `keyId` or `tokenHash`, and with `invalid_request` if `budgetLimit` exceeds {@link Store.maxAmount}.
   *
   * With `liveLimit`, rejects with GatewayError `too_many_keys` (`details.limit`), writing nothing,
   * when the owner would then hold more than `liveLimit` live keys: neither revoked nor expired at
   * `supersedeSessionAt` (default `key.createdAt`), the new key included and the keys it
   * supersedes not. Exact under concurrency, across processes: of N concurrent inserts for one
   * owner with room for M, exactly M succeed. The count reads only the owner's unrevoked keys
   * that expire later (an index of them), never the owner's revoked or expired ones.
   * @returns the ids of the keys it superseded.
   */
  insertKey(key: KeyRecord, options?: { supersedeSessionAt?: number; liveLimit?: number }): Promise<{ superseded: string[] }>;
  /** The key, or null if unknown. */
  getKeyById(keyId: string): Promise<KeyRecord | null>;
  /** The key whose token — or previous token, whatever its grace (the caller checks it) — hashes to `tokenHash`, or null. */
  getKeyByTokenHash(tokenHash: string): Promise<KeyRecord | null>;
  /**
   * A page of `owner`'s keys (optionally of one chain), newest first (createdAt desc, keyId desc),
   * starting after `cursor`. `nextCursor` is null on the last page. Expired and revoked keys are listed.
   */
  listKeys(owner: string, options: { limit: number; cursor?: KeyCursor; chainId?: number }): Promise<{ keys: KeyRecord[]; nextCursor: KeyCursor | null }>;
  /** The owner's active `session` key on `chainId` at `now` (unrevoked, unexpired; the newest if several) or null, by index. */
  findActiveSessionKey(owner: string, chainId: number, now: number): Promise<KeyRecord | null>;
  /**
   * The owner's keys on `chainId` that may still add to its charges, any order, in one read by index: unrevoked
   * with `expiresAt > liveAfter`, and the others holding a reservation (revoked or expired since `heldKeysSince(liveAfter)`).
   */
  listHeldKeys(owner: string, chainId: number, liveAfter: number): Promise<KeyRecord[]>;
  /**
   * Sets `revokedAt = at` if it is not set. Single native atomic operation; an already revoked key
   * is returned unchanged (the first revocation time wins); returns null when the key is unknown.
   * Outstanding intents of a revoked key can still be settled or aborted.
   */
  revokeKey(keyId: string, at: number): Promise<KeyRecord | null>;
  /**
   * Applies `patch` and records `event` in one atomic operation. Refuses (`below_committed`, nothing
   * changed) a `budgetLimit` below the current window's used + reserved (a lapsed window counts
   * used 0). A `budgetPeriod` that is set or changed starts a fresh window at `now`: `periodStart`
   * = its start, `budgetUsed` = 0 and the per-model counters' used = 0 (reservations carry over);
   * a period cleared drops `periodStart` and keeps `budgetUsed`.
   * With `liveLimit`, reviving an expired key past the owner's `liveLimit` live keys rejects with `too_many_keys` (counted atomically, as `insertKey` does).
   */
  updateKey(input: { keyId: string; patch: KeyPatch; now: number; event: KeyEventRecord; liveLimit?: number }): Promise<UpdateKeyResult>;
  /**
   * Replaces the key's token hash with `tokenHash`, keeps the old one as `previousTokenHash`
   * valid until `previousValidUntil` (an older previous token is dropped), and records `event`,
   * in one atomic operation; budget, counters and intents are untouched. Null when unknown.
   */
  rotateKey(input: { keyId: string; tokenHash: string; previousValidUntil: number; event: KeyEventRecord }): Promise<KeyRecord | null>;
  /** A page of a key's events, newest first (at desc, eventId desc), after `cursor` (the last event's `eventId`). */
  listKeyEvents(keyId: string, options: { limit: number; cursor?: { at: number; eventId: string } }): Promise<{ events: KeyEventRecord[]; nextCursor: { at: number; eventId: string } | null }>;
  /** The per-model counters of a key, by scope (only scopes that were ever reserved against). */
  getModelSpend(keyId: string): Promise<ModelSpendRecord[]>;
}

/** Payment intents and their reservations against key budgets. */
export interface LedgerStore {
  /**
   * Reserves `intent.maxAmount` on the key and inserts the intent as `authorized`. With an
   * `idempotencyKey`, first expires the key's own authorized intents with `expiresAt <= now`
   * (releasing them), then, if an intent with the same (keyId, idempotencyKey) exists, returns it
   * as `idempotent_replay` and reserves nothing. Else requires the key unrevoked, `expiresAt > now`
   * and `budgetLimit - budgetUsed - budgetReserved >= maxAmount`, adds to `budgetReserved` and sets
   * `lastUsedAt = now`. The key's overdue intents never make it refuse: when the guard fails, they
   * are expired (their reservations released) and the guard is checked once more in the same
   * operation; when it passes, they are left to the sweeper or a read
   * ({@link releaseOverdueIntents}). A key with a `budgetPeriod` first rolls a lapsed window
   * forward (used 0) within the same operation. With `intent.budgetScope`, the scope's counters (rolled the same
   * way) must also fit `limit - used - reserved >= maxAmount` (else `model_budget_exhausted`, the
   * key unchanged) and take the reservation too. Single native atomic operation; returns the
   * intent and the key's {@link KeyBudget} after it, or `{ok:false, reason}` when the guard fails;
   * exactly one concurrent caller wins the last fitting slot, and of N concurrent reserves with one
   * idempotency key exactly one inserts.
   *
   * With `openLimit`, the key must also hold fewer than `openLimit` authorized intents (overdue
   * ones count until they are expired: on a miss they are expired first, as for the budget), else
   * `too_many_open_intents`. Every store keeps that count in the same atomic steps that move an
   * intent into or out of `authorized`, so the guard is exact under concurrency (exactly one of
   * N concurrent reserves wins the last open slot) and costs no read of the key's intents.
   */
  reserve(input: { intent: NewIntent; now: number; openLimit?: number }): Promise<ReserveResult>;
  /**
   * Settles an authorized, unexpired intent with `0 <= finalAmount <= maxAmount`: moves
   * `maxAmount` out of reserved and `finalAmount` into used, stores `finalAmount`,
   * `releasedAmount = maxAmount - finalAmount`, `result` and `finishedAt = now`, and inserts
   * `charge` when given with `amount > 0`, all in one step. The key's window (and the intent's
   * scope's) is rolled forward first, so spend lands in the window it happens in. Single native atomic operation;
   * returns the key's {@link KeyBudget} after it, or `{ok:false, reason, intent}` when the guard
   * fails (see {@link FinishResult}), and expires the intent if it is past `expiresAt`; exactly one
   * concurrent caller wins.
   * `videoJob`, when given, is inserted in the same step (a paid video submission: its charge
   * and its job row land together or not at all); nothing is inserted when the guard fails.
   */
  settle(input: { intentId: string; finalAmount: bigint; result: unknown; now: number; charge?: ChargeRecord; videoJob?: VideoJobRecord }): Promise<FinishResult>;
  /**
   * Aborts an authorized, unexpired intent: releases its reservation, stores `reason`, `result`,
   * `releasedAmount = maxAmount`. Single native atomic operation; returns the key's
   * {@link KeyBudget} after it, or `{ok:false, reason, intent}` when the guard fails
   * (`invalid_state` or `expired`); exactly one concurrent caller wins.
   */
  abort(input: { intentId: string; reason: string; result: unknown; now: number }): Promise<FinishResult>;
  /**
   * The legacy key settle: reserve and settle `amount` at once. Expires the key's overdue intents
   * first (as {@link reserve} does with an idempotency key), then requires the key unrevoked, unexpired and `remaining >= amount`;
   * adds to `budgetUsed`, sets `lastUsedAt` and inserts `charge` when given with `amount > 0`.
   * Single native atomic operation; returns `{ok:false, reason}` when the guard fails; exactly one
   * concurrent caller wins the last fitting amount.
   */
  chargeDirect(input: { keyId: string; amount: bigint; now: number; charge?: ChargeRecord }): Promise<ChargeDirectResult>;
  /**
   * The sweeper: expires up to `limit` authorized intents with `expiresAt <= now` (oldest expiry
   * first, ties by intentId), releasing their reservations. Single native atomic operation; an intent is expired
   * by exactly one concurrent caller.
   * @returns how many it expired.
   */
  expireIntents(now: number, limit: number): Promise<number>;
  /**
   * Release on read for keys: expires every authorized intent of the given keys with
   * `expiresAt <= now`, releasing their reservations (as {@link chargeDirect} does first). Single
   * native atomic operation; an intent is expired by exactly one concurrent caller; unknown key
   * ids are ignored. Key reads (list, inspect, session status) call it before answering, so an
   * expired intent never shows as reserved.
   * @returns how many intents it expired.
   */
  releaseOverdueIntents(keyIds: readonly string[], now: number): Promise<number>;
  /**
   * The intent, or null if unknown. With `now`, an authorized intent past `expiresAt` is first
   * expired and released (release on read; single native atomic operation).
   */
  getIntent(intentId: string, now?: number): Promise<IntentRecord | null>;
  /**
   * A page of `owner`'s intents, newest first (createdAt desc, intentId desc), strictly after
   * `cursor`, optionally only those of one chain, one key or one listed status (see
   * {@link IntentListOptions}). A read: overdue authorized intents are not expired here.
   *
   * Bounded: with a filter, the page examines at most `scan` of the owner's intents after the
   * cursor (one index range, never the owner's whole history), so it may hold fewer than `limit`
   * intents, even none, and still return a `nextCursor` (the last intent it examined). Without a
   * filter a page is full unless the history ends. `nextCursor` is null only when no intent after
   * the page is left to examine.
   */
  listIntents(owner: string, options: IntentListOptions): Promise<IntentListPage>;
}

/**
 * Everything the gateway persists. Later capabilities (feedback, agents, dispenser, video) are
 * added as further sub-interfaces.
 */
export interface Store
  extends KeyStore, LedgerStore, ChargeStore, FeedbackStore, AgentStore, DispenserStore, VideoStore, PaymentNonceStore, TranscriptRestStore, AuthStore, UsageStore, HealthStore {
  /**
   * The largest amount (budget limit, reservation, charge) this store keeps exactly; larger
   * budgets are refused by `insertKey` with `invalid_request`. Memory: uint256 max. SQLite: 2^63-1.
   */
  readonly maxAmount: bigint;
  /** Releases the connection/resources. Idempotent. */
  close(): Promise<void>;
}
