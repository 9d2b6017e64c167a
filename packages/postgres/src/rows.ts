/**
 * Row shapes of the PostgreSQL tables, the SQL that reads them, and their conversion to the core
 * records (the shared mappers of `@tollgate/core`, with {@link dec} for free text).
 *
 * Every column that is not text is read as text (`::text` in the select lists below) and parsed
 * here, so results never depend on the driver's type parsers: a `pg.Pool` or `pg.Client` the
 * application configured its own way, or PGlite, all give the same records. Amounts are
 * NUMERIC(78,0) (every uint256 fits, so `maxAmount` is 2^256-1 as in the memory store) and go in
 * and out as decimal strings; timestamps are BIGINT milliseconds; JSON is the `json` type, which
 * keeps the text as given (key order, `\u0000` escapes), so a stored result replays byte for byte.
 */
import { chargeFromRow, intentFromRow, invalidRequest, keyFromRow, MAX_AMOUNT } from "@tollgate/core";
import type { ChargeRecord, IntentRecord, KeyRecord, SqlChargeRow, SqlIntentRow, SqlKeyRow } from "@tollgate/core";

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

/** A `\u0000` escape of JSON text, not itself escaped (an odd run of backslashes before `u0000`). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * The JSON text of an intent's request, U+0000 stored as U+FFFD: PostgreSQL refuses to read any
 * member of a `json` value that holds `\u0000` anywhere (22P05), and the charge trigger reads the
 * request's `modelId` (usage.ts), so such a request could never be settled with a charge. The
 * request is informational; the idempotency fingerprint is taken before, from the request as sent.
 */
export function requestJson(request: unknown): string {
  const json = JSON.stringify(request ?? null);
  return json.includes("\\u0000") ? json.replace(NUL_ESCAPE, "$1\\ufffd") : json;
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

export const KEY_COLS = selectList(
  "key_id token_hash owner purpose name budget_period previous_token_hash",
  "chain_id budget_limit budget_used budget_reserved created_at expires_at revoked_at last_used_at rate_limit_rpm period_start models model_budgets previous_token_valid_until",
);
/** The budget of a key (core `keyBudgetFromRow`): what a successful reserve, settle or abort returns. */
export const BUDGET_COLS = selectList("key_id budget_period", "budget_limit budget_used budget_reserved period_start");
export const INTENT_COLS = selectList(
  "intent_id key_id owner status idempotency_key fingerprint reason budget_scope",
  "chain_id max_amount final_amount released_amount request result created_at expires_at finished_at",
);
export const CHARGE_COLS = selectList(
  "charge_id intent_id key_id owner status tx_hash error batch_id transfer_tx",
  "chain_id amount created_at lease_until settled_at",
);

/** Rows as this store reads them: every non-text column as text (the select lists above). */
export type KeyRow = SqlKeyRow<string>;
export type IntentRow = SqlIntentRow<string>;
export type ChargeRow = SqlChargeRow<string>;

/** The JSON text of `modelBudgets` (amounts as decimal strings, each checked), or NULL. */
export function modelBudgetsJson(budgets: Record<string, bigint> | undefined | null): string | null {
  if (budgets === undefined || budgets === null) return null;
  return JSON.stringify(Object.fromEntries(Object.entries(budgets).map(([scope, amount]) => [scope, checkAmount(amount, "modelBudgets")])));
}

/** The core key mapper with this store's free-text decoding ({@link dec}). */
export const toKey = (r: KeyRow): KeyRecord => keyFromRow(r, dec);

/**
 * The core intent mapper with {@link dec}; the per-model scope is free text here too (stored
 * with {@link enc}: a model id may carry U+0000), which the core mapper leaves as stored.
 */
export function toIntent(r: IntentRow): IntentRecord {
  const intent = intentFromRow(r, dec);
  if (r.budget_scope != null) intent.budgetScope = dec(r.budget_scope);
  return intent;
}

/** The core charge mapper with {@link dec}. */
export const toCharge = (r: ChargeRow): ChargeRecord => chargeFromRow(r, dec);

/** The columns of a charge insert, in the order of {@link chargeValues}. */
export const CHARGE_INSERT_COLUMNS = "charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at, tx_hash, error, batch_id, lease_until, settled_at";

/** Placeholders `$first`, `$first+1`… cast to `types`, comma-separated. */
export function castPlaceholders(types: readonly string[], first: number): string {
  return types.map((t, i) => `$${first + i}::${t}`).join(", ");
}

/**
 * The thirteen placeholders of a charge insert starting at `$first`, cast to the column types (for
 * an `INSERT … SELECT` whose row only exists when a guard passed).
 */
export function chargePlaceholders(first: number): string {
  return castPlaceholders(["text", "text", "text", "text", "bigint", "numeric", "text", "bigint", "text", "text", "text", "bigint", "bigint"], first);
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
