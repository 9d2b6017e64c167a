/** Helpers shared by the media and video route suites: sending, receipts, and budget checks. */
import { expect } from "vitest";
import { fromBase64Url } from "@tollgate/core/internals";
import { bearer, type Harness, type Reply } from "./gateway-suite-fixtures.js";

/** A reply that also keeps the raw bytes (speech answers audio, not JSON). */
export interface MediaReply extends Reply {
  readonly bytes: Uint8Array;
}

/** What {@link send} posts: JSON, a multipart form, or raw text; a bearer token; an abort signal. */
export interface SendInit {
  token?: string;
  json?: unknown;
  form?: { body: Uint8Array; contentType: string };
  raw?: string;
  signal?: AbortSignal;
}

/** One request through `gateway.fetch`; the body is parsed when the answer is JSON. */
export async function send(h: Harness, path: string, init: SendInit = {}): Promise<MediaReply> {
  const headers: Record<string, string> = init.token ? bearer(init.token) : {};
  let body: BodyInit | undefined;
  if (init.form) {
    headers["content-type"] = init.form.contentType;
    body = init.form.body as Uint8Array<ArrayBuffer>;
  } else if (init.json !== undefined || init.raw !== undefined) {
    headers["content-type"] = "application/json";
    body = init.raw ?? JSON.stringify(init.json);
  }
  const req = new Request(`http://gateway.test${path}`, {
    method: "POST",
    headers,
    ...(body === undefined ? {} : { body }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const res = await h.gateway.fetch(req);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9_.:-]{1,128}$/);
  const isJson = /json/.test(res.headers.get("content-type") ?? "");
  return { status: res.status, headers: res.headers, bytes, body: isJson && bytes.length > 0 ? JSON.parse(new TextDecoder().decode(bytes)) : null };
}

/** The receipt carried by `X-Receipt` (base64url JSON). */
export function headerReceipt(r: Reply): any {
  const header = r.headers.get("x-receipt");
  expect(header, "X-Receipt header").toBeTruthy();
  return JSON.parse(fromBase64Url(header!)!);
}

/**
 * Asserts a key-billed success: the receipt's shape and subject, that it equals the `X-Receipt`
 * header and `POST /api/payments/meter/model` for `meter`, the intent and budget headers, and that
 * the key was charged exactly the receipt (nothing left reserved). Returns the receipt.
 */
export async function expectPaid(
  h: Harness,
  r: MediaReply,
  key: { keyId: string; token: string },
  subject: string,
  meter: Record<string, unknown>,
  usedBefore = 0n,
): Promise<any> {
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  const receipt = r.body?.receipt ?? headerReceipt(r);
  expect(headerReceipt(r)).toEqual(receipt);
  expect(receipt).toEqual({
    id: expect.stringMatching(/^rcpt_/),
    paymentIntentId: r.headers.get("x-payment-intent-id"),
    subject,
    lineItems: expect.any(Array),
    providerAmountWei: expect.stringMatching(/^\d+$/),
    platformFeeWei: expect.stringMatching(/^\d+$/),
    finalAmountWei: expect.stringMatching(/^[1-9]\d*$/),
    settlement: { status: "queued" },
  });
  expect(receipt.paymentIntentId).toMatch(/^pi_/);
  const [provider, ...rest] = subject.split(":");
  const m = await h.call("POST", "/api/payments/meter/model", { body: { modelId: rest.join(":"), provider, ...meter } });
  expect(m.status, JSON.stringify(m.body)).toBe(200);
  const priced = ({ lineItems, providerAmountWei, platformFeeWei, finalAmountWei }: any) => ({ lineItems, providerAmountWei, platformFeeWei, finalAmountWei });
  expect(priced(receipt)).toEqual(priced(m.body));
  const used = (usedBefore + BigInt(receipt.finalAmountWei)).toString();
  expect([r.headers.get("x-key-budget-used"), r.headers.get("x-key-budget-reserved")]).toEqual([used, "0"]);
  const view = await h.inspect(key.token, key.keyId);
  expect([view.budgetUsed, view.budgetReserved]).toEqual([used, "0"]);
  expect(r.headers.get("x-key-budget-remaining")).toBe(view.budgetRemaining);
  return receipt;
}

/** Asserts the key still has nothing used or reserved (a failed call charged nothing). */
export async function expectUncharged(h: Harness, key: { keyId: string; token: string }, used = "0"): Promise<void> {
  const view = await h.inspect(key.token, key.keyId);
  expect([view.budgetUsed, view.budgetReserved]).toEqual([used, "0"]);
}

/** A key with 100 USDC: enough for every route of the suites. */
export const richKey = (h: Harness) => h.createKey({ budgetLimit: "100000000" });

