/**
 * Row shapes of the SQLite tables and their conversion to the core records.
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
import { invalidRequest } from "@tollgate/core";
import type { ChargeRecord, IntentRecord, IntentStatus, KeyPurpose, KeyRecord } from "@tollgate/core";

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

export interface KeyRow {
  key_id: string;
  token_hash: string;
  owner: string;
  chain_id: bigint;
  purpose: string;
  name: string | null;
  budget_limit: bigint;
  budget_used: bigint;
  budget_reserved: bigint;
  created_at: bigint;
  expires_at: bigint;
  revoked_at: bigint | null;
  last_used_at: bigint | null;
}

export interface IntentRow {
  intent_id: string;
  key_id: string;
  owner: string;
  chain_id: bigint;
  status: string;
  max_amount: bigint;
  final_amount: bigint | null;
  released_amount: bigint | null;
  idempotency_key: string | null;
  fingerprint: string;
  request: string;
  result: string | null;
  reason: string | null;
  created_at: bigint;
  expires_at: bigint;
  finished_at: bigint | null;
}

export interface ChargeRow {
  charge_id: string;
  intent_id: string | null;
  key_id: string;
  owner: string;
  chain_id: bigint;
  amount: bigint;
  status: string;
  created_at: bigint;
  tx_hash: string | null;
  error: string | null;
  batch_id: string | null;
  lease_until: bigint | null;
  settled_at: bigint | null;
}

export function toKey(r: KeyRow): KeyRecord {
  const key: KeyRecord = {
    keyId: r.key_id,
    tokenHash: r.token_hash,
    owner: r.owner,
    chainId: Number(r.chain_id),
    purpose: r.purpose as KeyPurpose,
    budgetLimit: r.budget_limit,
    budgetUsed: r.budget_used,
    budgetReserved: r.budget_reserved,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.name !== null) key.name = r.name;
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
    maxAmount: r.max_amount,
    fingerprint: r.fingerprint,
    request: JSON.parse(r.request),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.final_amount !== null) intent.finalAmount = r.final_amount;
  if (r.released_amount !== null) intent.releasedAmount = r.released_amount;
  if (r.idempotency_key !== null) intent.idempotencyKey = r.idempotency_key;
  if (r.result !== null) intent.result = JSON.parse(r.result);
  if (r.reason !== null) intent.reason = r.reason;
  if (r.finished_at !== null) intent.finishedAt = Number(r.finished_at);
  return intent;
}

export function toCharge(r: ChargeRow): ChargeRecord {
  const charge: ChargeRecord = {
    chargeId: r.charge_id,
    keyId: r.key_id,
    owner: r.owner,
    chainId: Number(r.chain_id),
    amount: r.amount,
    status: r.status as ChargeRecord["status"],
    createdAt: Number(r.created_at),
  };
  if (r.intent_id !== null) charge.intentId = r.intent_id;
  if (r.tx_hash !== null) charge.txHash = r.tx_hash;
  if (r.error !== null) charge.error = r.error;
  if (r.batch_id !== null) charge.batchId = r.batch_id;
  if (r.lease_until !== null) charge.leaseUntil = Number(r.lease_until);
  if (r.settled_at !== null) charge.settledAt = Number(r.settled_at);
  return charge;
}

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
