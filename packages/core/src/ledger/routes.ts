/** The routes of payment intents (docs/payments.md "Payment intents"). */
import { z } from "zod";
import { GatewayError, invalidRequest } from "../errors.js";
import { idempotencyKeyHeader, requestChainId } from "../http/headers.js";
import { chainOfProof, proveWallet, WALLET_PROOF } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { amount, chainIdInput, clampedInt, optionalText } from "../http/schemas.js";
import type { IntentRecord } from "../store/types.js";
import { INTENT_LIST_SCAN, listedStatus } from "../store/intent-list.js";
import { budgetHeaders } from "../keys/view.js";
import { mediaSchema, usageSchema } from "../metering/usage.js";
import { meterCard, meterSchema, modelMeterQuote, type MeterInput } from "./meter.js";
import { isManagedIntent } from "./service.js";

/** A text field of an intent's request: no U+0000, which a PostgreSQL store cannot read back out of JSON. */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !s.includes("\0"), "must not contain U+0000");
const idempotencyKey = z.string().trim().min(1).max(255);

/**
 * Prepare: exactly one of `maxAmountWei` and `meter`; or, with neither, the top-level
 * `modelId`/`provider`/`modality`/`usage`/`media` of the prepare body (docs/payments.md "Payment intents"), priced as a usage meter.
 * Beside `maxAmountWei` or `meter` those top-level fields are accepted and only describe the work.
 */
const prepareBody = z
  .object({
    service: text(100),
    action: text(200),
    resource: text(2000),
    method: text(16),
    maxAmountWei: amount().optional(),
    meter: meterSchema.optional(),
    modelId: text(200).optional(),
    provider: text(64).optional(),
    modality: text(32).optional(),
    usage: usageSchema.optional(),
    media: mediaSchema.optional(),
    runId: text(200).optional(),
    composeRunId: text(200).optional(),
    idempotencyKey: idempotencyKey.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.maxAmountWei !== undefined && b.meter !== undefined)
      ctx.addIssue({ code: "custom", path: ["maxAmountWei"], message: "send exactly one of maxAmountWei and meter" });
    else if (b.maxAmountWei === undefined && b.meter === undefined) {
      if (b.modelId === undefined) ctx.addIssue({ code: "custom", path: ["maxAmountWei"], message: "send exactly one of maxAmountWei and meter (or modelId, modality and usage/media to meter)" });
      else if (b.modality === undefined) ctx.addIssue({ code: "custom", path: ["modality"], message: "modality is required to meter modelId" });
    }
  })
  .transform(({ modelId, provider, modality, usage, media, ...b }) => {
    // A model named beside maxAmountWei describes the work: the key's allow-list and caps apply to it.
    if (b.maxAmountWei !== undefined && modelId !== undefined) return { ...b, described: { modelId, ...(provider === undefined ? {} : { provider }) } };
    if (b.maxAmountWei !== undefined || b.meter !== undefined || modelId === undefined || modality === undefined) return b;
    const meter: MeterInput = { modelId, modality, ...(provider === undefined ? {} : { provider }), ...(usage === undefined ? {} : { usage }), ...(media === undefined ? {} : { media }) };
    return { ...b, meter };
  });

const settleBody = z
  .object({
    paymentIntentId: text(100),
    finalAmountWei: amount({ allowZero: true }).optional(),
    meter: meterSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.finalAmountWei === undefined) === (b.meter === undefined))
      ctx.addIssue({ code: "custom", path: ["finalAmountWei"], message: "send exactly one of finalAmountWei and meter" });
  });

const abortBody = z.object({ paymentIntentId: text(100), reason: z.string().trim().max(500).optional() });

const meterModelBody = z.object({
  modelId: text(200),
  provider: text(64).optional(),
  modality: text(32),
  usage: usageSchema.optional(),
  media: mediaSchema.optional(),
});

const listQuery = z.object({
  limit: clampedInt(50, 1, 200),
  cursor: optionalText(500),
  keyId: optionalText(100),
  chainId: chainIdInput.optional(),
  status: z.enum(["authorized", "settled", "aborted", "expired"]).optional(),
});

/** The wire view of an intent in a listing; an overdue authorized intent shows as `expired`. */
function intentView(intent: IntentRecord, now: number) {
  const request = (intent.request ?? {}) as Record<string, unknown>;
  const status = listedStatus(intent, now);
  const overdue = status !== intent.status;
  return {
    paymentIntentId: intent.intentId,
    keyId: intent.keyId,
    chainId: intent.chainId,
    status,
    service: request.service ?? null,
    action: request.action ?? null,
    resource: request.resource ?? null,
    maxAmountWei: intent.maxAmount.toString(),
    finalAmountWei: intent.finalAmount?.toString() ?? null,
    releasedWei: overdue ? intent.maxAmount.toString() : (intent.releasedAmount?.toString() ?? null),
    createdAt: intent.createdAt,
    expiresAt: intent.expiresAt,
    finishedAt: intent.finishedAt ?? null,
    reason: intent.reason ?? null,
    // The intent of a paid call the gateway serves: the gateway settles or releases it (settle/abort of it are 403).
    managed: isManagedIntent(intent),
  };
}

/** Builds the payment-intent and metering route table. */
export function ledgerRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/api/payments/prepare",
      tag: "payments",
      summary: "Authorize a payment intent from the bearer key: reserve maxAmountWei (or a priced meter, or top-level modelId/modality/usage) before work.",
      body: prepareBody,
      authenticate: (request, gateway) => gateway.services.keys.spender(request.headers.authorization),
      rateLimit: { key: (key) => key },
      security: { accepts: ["serviceKey"], charges: true },
      handle: async ({ request, auth: key, body, gateway }) => {
        const chainId = requestChainId(request);
        if (chainId === undefined) throw invalidRequest("The x-network-id header (chain id of the intent) is required.", "x-network-id");
        const fromHeader = idempotencyKeyHeader(request);
        if (fromHeader !== undefined && body.idempotencyKey !== undefined && fromHeader !== body.idempotencyKey)
          throw invalidRequest("x-idempotency-key and body idempotencyKey differ; send one", "idempotencyKey");
        const idem = body.idempotencyKey ?? fromHeader;
        const { intent, key: after, replay } = await gateway.services.ledger.prepare({
          key,
          chainId,
          service: body.service,
          action: body.action,
          resource: body.resource,
          method: body.method.toUpperCase(),
          maxAmount: body.maxAmountWei,
          meter: body.meter,
          runId: body.runId ?? body.composeRunId,
          idempotencyKey: idem,
          model: "described" in body && body.described ? gateway.services.catalog.find(body.described.modelId, body.described.provider) : undefined,
        });
        return json(
          { paymentIntentId: intent.intentId, status: intent.status, maxAmountWei: intent.maxAmount.toString(), expiresAt: intent.expiresAt },
          { headers: { "x-payment-intent-id": intent.intentId, ...budgetHeaders(after), ...(replay ? { "x-idempotent-replay": "true" } : {}) } },
        );
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/payments/intents",
      tag: "payments",
      summary: `List the payment intents of the proven wallet (with a service key: that key's own), newest first (limit, cursor, keyId, chainId, status). A filtered page examines at most ${INTENT_LIST_SCAN.toLocaleString("en-US")} intents: it may be short, even empty, with a next_cursor; page on until next_cursor is null.`,
      query: listQuery,
      authenticate: proveWallet,
      security: WALLET_PROOF,
      handle: async ({ auth: wallet, query, gateway }) => {
        const now = gateway.clock.now();
        // An intent's id settles or aborts it without a credential: a service key lists only its own
        // (a key handed to a third party must not learn, and so spend, the reservations of its siblings).
        const own = wallet.via === "service_key" ? wallet.key?.keyId : undefined;
        if (own !== undefined && query.keyId !== undefined && query.keyId !== own)
          throw new GatewayError("forbidden", "A service key lists only its own intents; sign in with the wallet to list those of its other keys.", { param: "keyId" });
        const page = await gateway.services.ledger.list(wallet.address, Object.assign({ now }, query, { chainId: chainOfProof(wallet, query.chainId) }, own ? { keyId: own } : {}));
        return json({ intents: page.intents.map((i) => intentView(i, now)), next_cursor: page.nextCursor });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/api/payments/settle",
      tag: "payments",
      summary: "Settle an authorized intent with finalAmountWei or a meter (at most the reservation; the rest is released).",
      body: settleBody,
      authenticate: (request, gateway) => gateway.services.keys.identify(request.headers.authorization),
      security: { accepts: ["serviceKey"], optional: true },
      handle: async ({ auth: bearer, body, gateway, trace }) => {
        const { view, key, replay } = await gateway.services.ledger.settle({
          intentId: body.paymentIntentId,
          finalAmount: body.finalAmountWei,
          meter: body.meter,
          bearer,
          trace,
        });
        return json(view, { headers: Object.assign(key ? budgetHeaders(key) : {}, replay ? { "x-idempotent-replay": "true" } : undefined) });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/api/payments/abort",
      tag: "payments",
      summary: "Abort an authorized intent; its whole reservation is released.",
      body: abortBody,
      authenticate: (request, gateway) => gateway.services.keys.identify(request.headers.authorization),
      security: { accepts: ["serviceKey"], optional: true },
      handle: async ({ auth: bearer, body, gateway }) => {
        const { view, key, replay } = await gateway.services.ledger.abort({ intentId: body.paymentIntentId, reason: body.reason || undefined, bearer });
        return json(view, { headers: Object.assign(key ? budgetHeaders(key) : {}, replay ? { "x-idempotent-replay": "true" } : undefined) });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/api/payments/meter/model",
      tag: "payments",
      summary: "Price a model output (usage tokens or media evidence) with the catalog's list prices plus the platform fee; answers known and a meter to settle with.",
      body: meterModelBody,
      handle: ({ body, gateway }) => {
        const card = meterCard(gateway.services.catalog, body.modelId, body.provider, body.modality);
        return json(modelMeterQuote(card, body.usage, body.media, gateway.services.feeBps));
      },
    }),
  ];
}

