/**
 * Row shapes of the SQLite tables (their conversion to the core records is `keyFromRow` and the
 * other mappers of `@tollgate/core`) and the checks on the write side.
 *
 * Amounts are stored as SQLite INTEGER (64-bit signed) and read back as bigint
 * (`defaultSafeIntegers(true)`). Why INTEGER and not a wider TEXT encoding: the budget guard
 * `budget_limit - budget_used - budget_reserved >= ?` must be evaluated exactly by SQLite inside
 * ONE conditional UPDATE, and SQLite has exact arithmetic only on 64-bit integers (TEXT would
 * need a read-then-write in JavaScript). The invariant `used + reserved <= limit` with all three
 * non-negative means no expression in a guard or an update can overflow as long as
 * `limit <= 2^63 - 1`. So this store is exact up to {@link MAX_INT64} (≈ 9.2e18 atomic units,
 * ≈ 9.2 trillion USDC): `insertKey` refuses a larger budget with `invalid_request`, and a
 * reservation or charge above it is a plain guard miss (it cannot fit any budget). Sums across
 * rows that may exceed it (pending charge totals) are added up in JavaScript.
 */
import type Database from "better-sqlite3";
import { invalidRequest } from "@tollgate/core";
import type { ChargeRecord, KeyRecord, SqlChargeRow, SqlIntentRow, SqlKeyBudgetRow, SqlKeyRow } from "@tollgate/core";

/** The largest amount the SQLite store holds: 2^63 - 1. */
export const MAX_INT64 = (1n << 63n) - 1n;

/** Refuses negative amounts (any amount) and, when `bounded`, amounts above {@link MAX_INT64}. */
export function checkAmount(value: bigint, param: string, bounded = true): void {
  if (value < 0n) throw invalidRequest(`${param} must not be negative`, param);
  if (bounded && value > MAX_INT64) throw invalidRequest(`${param} is above 2^63-1, the largest amount the SQLite store holds`, param);
}

/** JSON text of a value (`null` stays SQL NULL when `value` is undefined). */
export function toJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/** Rows as this store reads them: every INTEGER column is a bigint (`defaultSafeIntegers(true)`). */
export type KeyRow = SqlKeyRow<bigint>;
/** The budget columns of a key row that the guarded ledger steps return. */
export type BudgetRow = SqlKeyBudgetRow<bigint>;
export type IntentRow = SqlIntentRow<bigint>;
export type ChargeRow = SqlChargeRow<bigint>;

/** Named parameters of a charge insert. */
export function chargeParams(c: ChargeRecord): Record<string, unknown> {
  checkAmount(c.amount, "amount");
  return {
    charge_id: c.chargeId,
    intent_id: c.intentId ?? null,
    key_id: c.keyId,
    owner: c.owner,
    chain_id: c.chainId,
    amount: c.amount,
    status: c.status,
    created_at: c.createdAt,
    tx_hash: c.txHash ?? null,
    error: c.error ?? null,
    batch_id: c.batchId ?? null,
    lease_until: c.leaseUntil ?? null,
    settled_at: c.settledAt ?? null,
  };
}

/**
 * Named parameters of a key row (every column of `keys`): `models` as a JSON array,
 * `model_budgets` as a JSON object of decimal strings, absent fields as NULL.
 */
export function keyParams(k: KeyRecord): Record<string, unknown> {
  const budgets = k.modelBudgets && Object.fromEntries(Object.entries(k.modelBudgets).map(([scope, amount]) => [scope, amount.toString()]));
  return {
    key_id: k.keyId,
    token_hash: k.tokenHash,
    owner: k.owner,
    chain_id: k.chainId,
    purpose: k.purpose,
    name: k.name ?? null,
    budget_limit: k.budgetLimit,
    budget_used: k.budgetUsed,
    budget_reserved: k.budgetReserved,
    created_at: k.createdAt,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt ?? null,
    last_used_at: k.lastUsedAt ?? null,
    rate_limit_rpm: k.rateLimit?.requestsPerMinute ?? null,
    budget_period: k.budgetPeriod ?? null,
    period_start: k.periodStart ?? null,
    models: k.models ? JSON.stringify(k.models) : null,
    model_budgets: budgets ? JSON.stringify(budgets) : null,
    previous_token_hash: k.previousTokenHash ?? null,
    previous_token_valid_until: k.previousTokenValidUntil ?? null,
  };
}

/** A statement whose row is read with {@link objectRows}: `get` as better-sqlite3's, the row built here. */
export interface ObjectRowStatement<P extends unknown[], R> {
  get(...params: P): R | undefined;
}

/**
 * Reads the rows of `stmt` as arrays and builds each object here, column by column. Same rows as
 * `stmt.get`, for about half its cost on a wide row (`RETURNING *` of keys and intents on every
 * paid call): better-sqlite3 builds an object row property by property through the V8 API, while
 * a JavaScript loop with the same keys in the same order hits one cached object shape.
 */
export function objectRows<P extends unknown[], R>(stmt: Database.Statement<P, R>): ObjectRowStatement<P, R> {
  const names = stmt.columns().map((c) => c.name);
  const raw = stmt.raw(true) as unknown as { get(...params: P): unknown[] | undefined };
  return {
    get(...params) {
      const values = raw.get(...params);
      if (values === undefined) return undefined;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
      return row as R;
    },
  };
}
