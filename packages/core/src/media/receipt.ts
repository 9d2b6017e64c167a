/** Receipts of paid media calls: the `receipt` field of JSON answers and the `X-Receipt` header. */
import { toBase64Url } from "../encoding.js";
import { wireLineItems, type Priced, type WireLineItem } from "../metering/pricing.js";

/** What a paid call cost and how it was paid (docs/media.md). */
export interface Receipt {
  readonly id: string;
  readonly paymentIntentId?: string;
  readonly subject: string;
  /** Line items as the origin client types them: `quantity` and `unitPriceUsd` numbers, amounts strings. */
  readonly lineItems: readonly WireLineItem[];
  readonly providerAmountWei: string;
  readonly platformFeeWei: string;
  readonly finalAmountWei: string;
  readonly settlement: { readonly status: "queued" | "settled" | "off_chain"; readonly txHash?: string; readonly network?: string; readonly payer?: string };
}

/** Builds a receipt from a priced result. */
export function makeReceipt(id: string, subject: string, priced: Priced, settlement: Receipt["settlement"], paymentIntentId?: string): Receipt {
  return {
    id,
    ...(paymentIntentId === undefined ? {} : { paymentIntentId }),
    subject,
    lineItems: wireLineItems(priced.lineItems),
    providerAmountWei: priced.providerAmount.toString(),
    platformFeeWei: priced.platformFee.toString(),
    finalAmountWei: priced.finalAmount.toString(),
    settlement,
  };
}

/**
 * The `X-Receipt` header value: base64url of the receipt's JSON text. The caller serializes the
 * receipt once and passes the same text to a pass-through body (a WeakMap memo keyed by each
 * receipt would keep every call's receipt alive through young-generation collections).
 */
export function receiptHeader(receiptJson: string): string {
  return toBase64Url(receiptJson);
}
