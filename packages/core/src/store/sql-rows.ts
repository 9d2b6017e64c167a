/**
 * For SQL store authors: the rows of the standard schema (the tables and column names that
 * `@tollgate/sqlite` and `@tollgate/postgres` both migrate to) and one mapper per record that turns
 * a row into the core record, so every SQL store reads its rows the same way.
 *
 * Integers and amounts may arrive as bigint, number or decimal text ({@link SqlInt}, whatever the
 * driver gives: SQLite safe integers, PostgreSQL `::text`); amounts become `bigint`, timestamps,
 * chain ids and other small integers `number`. JSON columns arrive as their JSON text. SQL NULL
 * (`null`) means the optional field is absent from the record. A store that encodes free text on
 * the way in (PostgreSQL escapes U+0000) passes the inverse as `text`; it is applied to the
 * free-text columns each mapper names and to no other column (ids, addresses, hashes and enums are
 * stored verbatim). Mappers never validate: a row that breaks the schema gives a broken record.
 */
import type {
  AgentCard,
  AuthNonceRecord,
  BudgetPeriod,
  ChargeRecord,
  DispenserClaimRecord,
  FeedbackRecord,
  IntentRecord,
  IntentStatus,
  KeyPurpose,
  KeyRecord,
  SessionRecord,
  VideoJobRecord,
  VideoJobStatus,
} from "./types.js";

/** An integer or amount column as a driver may give it: bigint, number or decimal text. */
export type SqlInt = bigint | number | string;

/** Decodes a free-text column as stored back to the caller's string. */
export type SqlTextDecoder = (stored: string) => string;

const same: SqlTextDecoder = (s) => s;

/** A row of `keys` (without store-private columns such as PostgreSQL's `current_session`). */
export interface SqlKeyRow<I extends SqlInt = SqlInt> {
  key_id: string;
  token_hash: string;
  owner: string;
  chain_id: I;
  purpose: string;
  name: string | null;
  budget_limit: I;
  budget_used: I;
  budget_reserved: I;
  created_at: I;
  expires_at: I;
  revoked_at: I | null;
  last_used_at: I | null;
  /** How many authorized intents the key holds (migration 13: the open-intent cap's counter); absent on rows that do not select it. */
  open_intents?: I;
  /** The key's own requests per minute (migration 8); NULL, or absent from the row, means none. */
  rate_limit_rpm?: I | null;
  // Key governance (migration 11); NULL, or absent from the row, means the field is absent.
  /** `daily`, `weekly` or `monthly`. */
  budget_period?: string | null;
  period_start?: I | null;
  /** JSON array of model ids and `<provider>/*` patterns. */
  models?: string | null;
  /** JSON object: scope → amount as a decimal string. */
  model_budgets?: string | null;
  previous_token_hash?: string | null;
  previous_token_valid_until?: I | null;
}

/** A row of `intents`; `request` and `result` are JSON text. */
export interface SqlIntentRow<I extends SqlInt = SqlInt> {
  intent_id: string;
  key_id: string;
  owner: string;
  chain_id: I;
  status: string;
  max_amount: I;
  final_amount: I | null;
  released_amount: I | null;
  idempotency_key: string | null;
  fingerprint: string;
  request: string;
  result: string | null;
  reason: string | null;
  created_at: I;
  expires_at: I;
  finished_at: I | null;
  /** The per-model cap the intent counts against (migration 11); NULL, or absent from the row, means none. */
  budget_scope?: string | null;
}

/** A row of `charges`. */
export interface SqlChargeRow<I extends SqlInt = SqlInt> {
  charge_id: string;
  intent_id: string | null;
  key_id: string;
  owner: string;
  chain_id: I;
  amount: I;
  status: string;
  created_at: I;
  tx_hash: string | null;
  error: string | null;
  batch_id: string | null;
  lease_until: I | null;
  settled_at: I | null;
  transfer_tx: string | null;
}

/** A row of `video_jobs`; `receipt` is JSON text. */
export interface SqlVideoJobRow<I extends SqlInt = SqlInt> {
  id: string;
  model: string;
  provider: string;
  upstream: string;
  upstream_id: string;
  status: string;
  /** INTEGER in SQLite, double precision in PostgreSQL: `number` or decimal text both parse. */
  progress: I | null;
  url: string | null;
  error: string | null;
  receipt: string | null;
  created_at: I;
  updated_at: I;
  lease_owner: string | null;
  lease_until: I | null;
}

/** A row of `auth_nonces` (SIWE nonces). */
export interface SqlAuthNonceRow<I extends SqlInt = SqlInt> {
  nonce: string;
  address: string;
  chain_id: I;
  issued_at: I;
  expires_at: I;
}

/** A row of `auth_sessions` (wallet sessions). */
export interface SqlSessionRow<I extends SqlInt = SqlInt> {
  session_id: string;
  token_hash: string;
  address: string;
  chain_id: I;
  /** `SessionSigner` (migration 17; rows from before it read `contract`, bound to their chain). */
  signer: string;
  domain: string;
  created_at: I;
  expires_at: I;
  revoked_at: I | null;
}

/**
 * A row of `feedback` (the insert-order column `seq` is only sorted on, never mapped); `labels`,
 * `context` and `metadata` are JSON text (the last two since migration 10; NULL or missing = absent).
 */
export interface SqlFeedbackRow<I extends SqlInt = SqlInt> {
  feedback_id: string;
  target_type: string;
  target_id: string;
  category: string;
  rating: I | null;
  comment: string | null;
  labels: string;
  verification: string;
  reviewer: string | null;
  key_id: string | null;
  chain_id: I | null;
  created_at: I;
  context?: string | null;
  metadata?: string | null;
}

/** A row of `agents`; `card` is the JSON text of every card field but the two with their own columns. */
export interface SqlAgentRow<I extends SqlInt = SqlInt> {
  wallet_address: string;
  created_at: I;
  card: string;
}

/** A row of `dispenser_claims`. */
export interface SqlDispenserClaimRow<I extends SqlInt = SqlInt> {
  address: string;
  chain_id: I;
  status: string;
  amount: I;
  created_at: I;
  claimed_at: I | null;
  tx_hash: string | null;
  transfer_tx: string | null;
}

/** The key of a `keys` row. Free text: `name`. */
export function keyFromRow(r: SqlKeyRow, text: SqlTextDecoder = same): KeyRecord {
  const key: KeyRecord = {
    keyId: r.key_id,
    tokenHash: r.token_hash,
    owner: r.owner,
    chainId: Number(r.chain_id),
    purpose: r.purpose as KeyPurpose,
    budgetLimit: BigInt(r.budget_limit),
    budgetUsed: BigInt(r.budget_used),
    budgetReserved: BigInt(r.budget_reserved),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.name !== null) key.name = text(r.name);
  if (r.revoked_at !== null) key.revokedAt = Number(r.revoked_at);
  if (r.last_used_at !== null) key.lastUsedAt = Number(r.last_used_at);
  if (r.rate_limit_rpm !== null && r.rate_limit_rpm !== undefined) key.rateLimit = { requestsPerMinute: Number(r.rate_limit_rpm) };
  if (r.budget_period != null) key.budgetPeriod = r.budget_period as BudgetPeriod;
  if (r.period_start != null) key.periodStart = Number(r.period_start);
  if (r.models != null) key.models = JSON.parse(r.models) as string[];
  if (r.model_budgets != null) {
    const amounts = JSON.parse(r.model_budgets) as Record<string, string>;
    key.modelBudgets = Object.fromEntries(Object.entries(amounts).map(([scope, amount]) => [scope, BigInt(amount)]));
  }
  if (r.previous_token_hash != null) key.previousTokenHash = r.previous_token_hash;
  if (r.previous_token_valid_until != null) key.previousTokenValidUntil = Number(r.previous_token_valid_until);
  return key;
}

/** The intent of an `intents` row. Free text: `idempotency_key`, `reason`. */
export function intentFromRow(r: SqlIntentRow, text: SqlTextDecoder = same): IntentRecord {
  const intent: IntentRecord = {
    intentId: r.intent_id,
    keyId: r.key_id,
    owner: r.owner,
    chainId: Number(r.chain_id),
    status: r.status as IntentStatus,
    maxAmount: BigInt(r.max_amount),
    fingerprint: r.fingerprint,
    request: JSON.parse(r.request),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.final_amount !== null) intent.finalAmount = BigInt(r.final_amount);
  if (r.released_amount !== null) intent.releasedAmount = BigInt(r.released_amount);
  if (r.idempotency_key !== null) intent.idempotencyKey = text(r.idempotency_key);
  if (r.result !== null) intent.result = JSON.parse(r.result);
  if (r.reason !== null) intent.reason = text(r.reason);
  if (r.finished_at !== null) intent.finishedAt = Number(r.finished_at);
  if (r.budget_scope != null) intent.budgetScope = r.budget_scope;
  return intent;
}

/** The charge of a `charges` row. Free text: `error`. */
export function chargeFromRow(r: SqlChargeRow, text: SqlTextDecoder = same): ChargeRecord {
  const charge: ChargeRecord = {
    chargeId: r.charge_id,
    keyId: r.key_id,
    owner: r.owner,
    chainId: Number(r.chain_id),
    amount: BigInt(r.amount),
    status: r.status as ChargeRecord["status"],
    createdAt: Number(r.created_at),
  };
  if (r.intent_id !== null) charge.intentId = r.intent_id;
  if (r.tx_hash !== null) charge.txHash = r.tx_hash;
  if (r.error !== null) charge.error = text(r.error);
  if (r.batch_id !== null) charge.batchId = r.batch_id;
  if (r.lease_until !== null) charge.leaseUntil = Number(r.lease_until);
  if (r.settled_at !== null) charge.settledAt = Number(r.settled_at);
  if (r.transfer_tx !== null) charge.transferTx = r.transfer_tx;
  return charge;
}

/** The job of a `video_jobs` row. Free text: `url`, `error`. */
export function videoJobFromRow(r: SqlVideoJobRow, text: SqlTextDecoder = same): VideoJobRecord {
  return {
    id: r.id,
    model: r.model,
    provider: r.provider,
    upstream: r.upstream,
    upstreamId: r.upstream_id,
    status: r.status as VideoJobStatus,
    ...(r.progress === null ? {} : { progress: Number(r.progress) }),
    ...(r.url === null ? {} : { url: text(r.url) }),
    ...(r.error === null ? {} : { error: text(r.error) }),
    ...(r.receipt === null ? {} : { receipt: JSON.parse(r.receipt) as unknown }),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    ...(r.lease_owner === null ? {} : { leaseOwner: r.lease_owner }),
    ...(r.lease_until === null ? {} : { leaseUntil: Number(r.lease_until) }),
  };
}

/** The nonce of an `auth_nonces` row (no free-text columns). */
export function authNonceFromRow(r: SqlAuthNonceRow): AuthNonceRecord {
  return { nonce: r.nonce, address: r.address, chainId: Number(r.chain_id), issuedAt: Number(r.issued_at), expiresAt: Number(r.expires_at) };
}

/** The session of an `auth_sessions` row. Free text: `domain`. */
export function sessionFromRow(r: SqlSessionRow, text: SqlTextDecoder = same): SessionRecord {
  const session: SessionRecord = {
    sessionId: r.session_id,
    tokenHash: r.token_hash,
    address: r.address,
    chainId: Number(r.chain_id),
    signer: r.signer === "eoa" ? "eoa" : "contract",
    domain: text(r.domain),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.revoked_at !== null) session.revokedAt = Number(r.revoked_at);
  return session;
}

/** The record of a `feedback` row. Free text: `target_type`, `target_id`, `category`, `comment`. */
export function feedbackFromRow(r: SqlFeedbackRow, text: SqlTextDecoder = same): FeedbackRecord {
  const record: FeedbackRecord = {
    feedbackId: r.feedback_id,
    targetType: text(r.target_type),
    targetId: text(r.target_id),
    category: text(r.category),
    labels: JSON.parse(r.labels) as string[],
    verification: r.verification as FeedbackRecord["verification"],
    createdAt: Number(r.created_at),
  };
  if (r.rating !== null) record.rating = Number(r.rating);
  if (r.comment !== null) record.comment = text(r.comment);
  if (r.reviewer !== null) record.reviewer = r.reviewer;
  if (r.key_id !== null) record.keyId = r.key_id;
  if (r.chain_id !== null) record.chainId = Number(r.chain_id);
  if (r.context != null) record.context = JSON.parse(r.context) as Record<string, unknown>;
  if (r.metadata != null) record.metadata = JSON.parse(r.metadata) as Record<string, unknown>;
  return record;
}

/** The card of an `agents` row (no free-text columns: the card is JSON). */
export function agentFromRow(r: SqlAgentRow): AgentCard {
  const rest = JSON.parse(r.card) as Omit<AgentCard, "walletAddress" | "createdAt">;
  return { walletAddress: r.wallet_address, ...rest, createdAt: Number(r.created_at) };
}

/** The claim of a `dispenser_claims` row (no free-text columns). */
export function dispenserClaimFromRow(r: SqlDispenserClaimRow): DispenserClaimRecord {
  const claim: DispenserClaimRecord = {
    address: r.address,
    chainId: Number(r.chain_id),
    status: r.status as DispenserClaimRecord["status"],
    amount: BigInt(r.amount),
    createdAt: Number(r.created_at),
  };
  if (r.claimed_at !== null) claim.claimedAt = Number(r.claimed_at);
  if (r.tx_hash !== null) claim.txHash = r.tx_hash;
  if (r.transfer_tx !== null) claim.transferTx = r.transfer_tx;
  return claim;
}

/**
 * Keyset paging for SQL stores: a page query asks for `limit + 1` rows ({@link pageQuerySize});
 * `keysetPage` maps the first `limit` of them and returns the last mapped item as `more` only
 * when the extra row shows that another page follows (null on the last page).
 */
export function keysetPage<R, T>(rows: readonly R[], limit: number, map: (row: R) => T): { items: T[]; more: T | null } {
  const n = pageLimit(limit);
  const items = rows.slice(0, n).map(map);
  return { items, more: rows.length > n ? (items[items.length - 1] ?? null) : null };
}

/** The row count a keyset page query asks for: `limit` (floored, at least 0) plus one. */
export function pageQuerySize(limit: number): number {
  return pageLimit(limit) + 1;
}

function pageLimit(limit: number): number {
  return Math.max(0, Math.floor(limit));
}
