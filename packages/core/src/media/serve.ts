/** The routes' side of a paid call: run it through the billing pipeline and answer over HTTP. */
import type { GatewayContext } from "../context.js";
import { json } from "../http/respond.js";
import type { GatewayResponse } from "../http/types.js";
import type { PaidCall, PaidRequest } from "./billing.js";
import type { Receipt } from "./receipt.js";

/**
 * Runs a paid call and builds the answer from its result, receipt, payment headers and the
 * receipt's JSON text (for a body that passes upstream bytes through); a payment
 * answer (402 challenge) is returned as is. Throws the upstream's GatewayError after the payment
 * was released.
 */
export async function servePaid<T>(
  gateway: GatewayContext,
  from: PaidRequest,
  call: PaidCall<T>,
  answer: (result: T, receipt: Receipt, headers: Record<string, string>, receiptJson: string) => GatewayResponse | Promise<GatewayResponse>,
): Promise<GatewayResponse> {
  // Tracked: `gateway.close()` waits for a paid call to settle or release its payment before the store closes.
  const billed = gateway.services.media.billing.run(from, call);
  gateway.background.track(billed);
  const outcome = await billed;
  if (outcome.kind === "respond") return outcome.response;
  return answer(outcome.result, outcome.receipt, outcome.headers, outcome.receiptJson);
}

/** A JSON answer with the receipt as a field and the payment headers. */
export function withReceipt(body: Record<string, unknown>, receipt: Receipt, headers: Record<string, string>, status = 200): GatewayResponse {
  return json(Object.assign({}, body, { receipt }), { status, headers });
}
