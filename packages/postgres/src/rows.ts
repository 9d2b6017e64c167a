/**
 * Row shapes of the PostgreSQL tables, the SQL that reads them, and their conversion to the core
 * records.
 *
 * Every column that is not text is read as text (`::text` in the select lists below) and parsed
 * here, so results never depend on the driver's type parsers: a `pg.Pool` or `pg.Client` the
 * application configured its own way, or PGlite, all give the same records. Amounts are
 * NUMERIC(78,0) (every uint256 fits, so `maxAmount` is 2^256-1 as in the memory store) and go in
 * and out as decimal strings; timestamps are BIGINT milliseconds; JSON is the `json` type, which
 * keeps the text as given (key order, `\u0000` escapes), so a stored result replays byte for byte.
 */
import { invalidRequest, MAX_AMOUNT } from "@tollgate/core";
import type { ChargeRecord, IntentRecord, IntentStatus, KeyPurpose, KeyRecord } from "@tollgate/core";

/** Refuses negative amounts and amounts above uint256 (what NUMERIC(78,0) columns are checked for). */
export function checkAmount(value: bigint, param: string): string {
  if (value < 0n) throw invalidRequest(`${param} must not be negative`, param);
  if (value > MAX_AMOUNT) throw invalidRequest(`${param} is larger than uint256`, param);
  return value.toString();
}

/** JSON text of a value (`null`, i.e. SQL NULL, when `value` is undefined). */
export function toJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/**
 * PostgreSQL text cannot hold U+0000, which callers may send (a feedback target id, a key name,
 * an idempotency key). Free text is therefore stored with `\` doubled and NUL written `\0`: the
 * mapping is injective, so equality, uniqueness and index lookups behave as on the plain strings,
 * and text without either character is stored unchanged.
 */
export function enc(value: string): string;
export function enc(value: string | undefined | null): string | null;
export function enc(value: string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  return /[\\\0]/.test(value) ? value.replace(/\\/g, "\\\\").replace(/\0/g, "\\0") : value;
}

/** The inverse of {@link enc}. */
export function dec(value: string): string {
  return value.includes("\\") ? value.replace(/\\([\\0])/g, (_, c: string) => (c === "0" ? "\0" : "\\")) : value;
}

/** A select list: `plain` columns as they are, `cast` columns as text under their own name. */
export function selectList(plain: string, cast: string): string {
  const names = (s: string) => s.split(/\s+/).filter(Boolean);
  return [...names(plain), ...names(cast).map((c) => `${c}::text AS ${c}`)].join(", ");
}

/** A scalar subquery giving the single row of `from` (a CTE) as JSON text of `cols`, or NULL. */
export function rowJson(cols: string, from: string): string {
  return `(SELECT row_to_json(r)::text FROM (SELECT ${cols} FROM ${from}) r)`;
}

/** Parses a {@link rowJson} column. */
export function parseRow<R>(text: string | null | undefined): R | null {
  return text === null || text === undefined ? null : (JSON.parse(text) as R);
}

/** The quoted, schema-qualified name of a table. */
export type TableName = (table: string) => string;

/** Quotes an identifier for PostgreSQL. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Table names qualified with `schema`. */
export function tablesIn(schema: string): TableName {
  const s = quoteIdent(schema);
  return (table) => `${s}.${quoteIdent(table)}`;
}

/** A nullable text column as a number. */
const num = (v: string | null): number | undefined => (v === null ? undefined : Number(v));

export const KEY_COLS = selectList(
  "key_id token_hash owner purpose name",
  "chain_id budget_limit budget_used budget_reserved created_at expires_at revoked_at last_used_at",
);
export const INTENT_COLS = selectList(
  "intent_id key_id owner status idempotency_key fingerprint reason",
  "chain_id max_amount final_amount released_amount request result created_at expires_at finished_at",
);
export const CHARGE_COLS = selectList(
  "charge_id intent_id key_id owner status tx_hash error batch_id",
  "chain_id amount created_at lease_until settled_at",
);

export interface KeyRow {
  key_id: string;
  token_hash: string;
  owner: string;
  chain_id: string;
  purpose: string;
  name: string | null;
  budget_limit: string;
  budget_used: string;
  budget_reserved: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface IntentRow {
  intent_id: string;
  key_id: string;
  owner: string;
  chain_id: string;
  status: string;
  max_amount: string;
  final_amount: string | null;
  released_amount: string | null;
  idempotency_key: string | null;
  fingerprint: string;
  request: string;
  result: string | null;
  reason: string | null;
  created_at: string;
  expires_at: string;
  finished_at: string | null;
}

export interface ChargeRow {
  charge_id: string;
  intent_id: string | null;
  key_id: string;
  owner: string;
  chain_id: string;
  amount: string;
  status: string;
  created_at: string;
  tx_hash: string | null;
  error: string | null;
  batch_id: string | null;
  lease_until: string | null;
  settled_at: string | null;
}

export function toKey(r: KeyRow): KeyRecord {
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
  if (r.name !== null) key.name = dec(r.name);
  if (r.revoked_at !== null) key.revokedAt = Number(r.revoked_at);
  if (r.last_used_at !== null) key.lastUsedAt = Number(r.last_used_at);
  return key;
}

export function toIntent(r: IntentRow): IntentRecord {
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
  if (r.idempotency_key !== null) intent.idempotencyKey = dec(r.idempotency_key);
  if (r.result !== null) intent.result = JSON.parse(r.result);
  if (r.reason !== null) intent.reason = dec(r.reason);
  if (r.finished_at !== null) intent.finishedAt = Number(r.finished_at);
  return intent;
}

export function toCharge(r: ChargeRow): ChargeRecord {
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
  if (r.error !== null) charge.error = dec(r.error);
  if (r.batch_id !== null) charge.batchId = r.batch_id;
  const leaseUntil = num(r.lease_until);
  if (leaseUntil !== undefined) charge.leaseUntil = leaseUntil;
  const settledAt = num(r.settled_at);
  if (settledAt !== undefined) charge.settledAt = settledAt;
  return charge;
}

/** The columns of a charge insert, in the order of {@link chargeValues}. */
export const CHARGE_INSERT_COLUMNS = "charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at, tx_hash, error, batch_id, lease_until, settled_at";

/**
 * The thirteen placeholders of a charge insert starting at `$first`, cast to the column types (for
 * an `INSERT … SELECT` whose row only exists when a guard passed).
 */
export function chargePlaceholders(first: number): string {
  const types = ["text", "text", "text", "text", "bigint", "numeric", "text", "bigint", "text", "text", "text", "bigint", "bigint"];
  return types.map((t, i) => `$${first + i}::${t}`).join(", ");
}

/** The values of {@link chargePlaceholders}; all NULL when there is no charge to queue. */
export function chargeValues(c: ChargeRecord | undefined): (string | number | null)[] {
  if (!c || c.amount <= 0n) return Array.from({ length: 13 }, () => null);
  return [
    c.chargeId,
    c.intentId ?? null,
    c.keyId,
    c.owner,
    c.chainId,
    checkAmount(c.amount, "amount"),
    c.status,
    c.createdAt,
    c.txHash ?? null,
    enc(c.error),
    c.batchId ?? null,
    c.leaseUntil ?? null,
    c.settledAt ?? null,
  ];
}
