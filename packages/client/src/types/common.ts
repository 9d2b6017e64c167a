/** Shapes shared by several resources: amounts, line items, receipts, budgets. */

/**
 * A USDC amount in atomic units (6 decimals: `1000000n` is 1.00 USDC) as a bigint or a string of
 * digits. Sent as a decimal string; never a float.
 */
export type Amount = bigint | string;

/** One priced line of a meter or receipt. Amounts are decimal strings. */
export interface LineItem {
  key: string;
  unit: string;
  /** How many units were counted (tokens, images, characters, seconds, requests). */
  quantity: number;
  /** USD per unit of `unit` (not an atomic amount). */
  unitPriceUsd: number;
  /** Atomic units, decimal string. */
  amountWei: string;
}

/** How a charge is (or will be) moved on-chain. */
export interface SettlementState {
  status: "queued" | "settled" | "off_chain";
  txHash?: string;
  network?: string;
  payer?: string;
}

/** What a paid media call cost and how it was paid: the `receipt` field and the `X-Receipt` header. */
export interface Receipt {
  /** `rcpt_…`. */
  id: string;
  /** Present when a service key paid (the intent that was reserved and settled). */
  paymentIntentId?: string;
  /** `<provider>:<modelId>`. */
  subject: string;
  lineItems: LineItem[];
  providerAmountWei: string;
  platformFeeWei: string;
  finalAmountWei: string;
  settlement: SettlementState;
}

/** A key's budget after a key-billed call, from the `x-key-budget-*` headers. Atomic units. */
export interface Budget {
  limit: bigint;
  used: bigint;
  reserved: bigint;
  /** `limit - used - reserved`. */
  remaining: bigint;
}

/**
 * Why the output cap sent upstream has its value (`x-output-cap-reason`): the request's
 * `max_completion_tokens`/`max_tokens`, the model's maximum output, or the key's budget (the key
 * could not afford the whole cap, so the gateway lowered it to what the budget buys).
 */
export type OutputCapReason = "request" | "model" | "budget";

/** The output cap per choice a chat completion's upstream was sent (`x-output-cap`, `x-output-cap-reason`). */
export interface OutputCap {
  /** Output tokens per choice, at least 1. */
  tokens: number;
  /** Why it has this value; a reason a newer gateway adds passes as sent. */
  reason: OutputCapReason;
}

/** A rate limit's state, from the `x-ratelimit-limit`, `-remaining` and `-reset` headers. */
export interface RateLimitInfo {
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** A page marker: pass `next_cursor` back as `cursor`; null on the last page. */
export interface Paged {
  next_cursor: string | null;
}
