/** Row mappers of the x402 nonce claims (`x402_nonces`), shared by the SQL stores (see sql-rows.ts). */
import type { PaymentNonceRecord, UnsurePaymentNonce } from "./types.js";
import type { SqlInt } from "./sql-rows.js";

/** A row of `x402_nonces`. */
export interface SqlNonceRow<I extends SqlInt = SqlInt> {
  network: string;
  payer: string;
  nonce: string;
  request_id: string;
  status: string;
  claimed_at: I;
  expires_at: I;
  tx_hash: string | null;
  settled_at: I | null;
  check_until: I | null;
}

/** The columns of an `x402_nonces` row marked unsure that its watch reads. */
export interface SqlUnsureNonceRow<I extends SqlInt = SqlInt> {
  network: string;
  payer: string;
  nonce: string;
  request_id: string;
  amount: I;
  pay_to: string;
  check_until: I;
}

/** The nonce claim of an `x402_nonces` row (no free-text columns). */
export function nonceFromRow(r: SqlNonceRow): PaymentNonceRecord {
  const record: PaymentNonceRecord = {
    network: r.network,
    payer: r.payer,
    nonce: r.nonce,
    requestId: r.request_id,
    status: r.status as PaymentNonceRecord["status"],
    claimedAt: Number(r.claimed_at),
    expiresAt: Number(r.expires_at),
  };
  if (r.tx_hash !== null) record.txHash = r.tx_hash;
  if (r.settled_at !== null) record.settledAt = Number(r.settled_at);
  if (r.check_until !== null) record.checkUntil = Number(r.check_until);
  return record;
}

/** The unsure claim of an `x402_nonces` row. */
export function unsureNonceFromRow(r: SqlUnsureNonceRow): UnsurePaymentNonce {
  return {
    network: r.network,
    payer: r.payer,
    nonce: r.nonce,
    requestId: r.request_id,
    amount: BigInt(r.amount),
    payTo: r.pay_to,
    checkUntil: Number(r.check_until),
  };
}
