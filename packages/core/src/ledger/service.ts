/**
 * Payment intents: reserve budget before work (prepare), settle the metered amount after, or
 * abort. Every state move is one guarded store operation; this service only validates, prices,
 * and turns guard misses into their HTTP answers (replays, 402, 409).
 */
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { IdGenerator } from "../ids.js";
import { assertKeyChain, assertUsable, budgetExhausted, modelBudgetExhausted } from "../keys/service.js";
import { assertModelAllowed, budgetScopeFor, type ModelRef } from "../keys/governance.js";
import { windowStart } from "../keys/period.js";
import { remainingOf } from "../keys/view.js";
import { sha256Hex } from "../sha256.js";
import { decodeKeysetCursor, encodeKeysetCursor } from "../keyset-cursor.js";
import { wireLineItems } from "../metering/pricing.js";
import type { IntentRecord, KeyRecord, Store } from "../store/types.js";
import { MAX_INTENT_LIFETIME_MS } from "../store/usage-days.js";
import { priceMeter, type PricedMeter } from "./meter.js";
import { noopTelemetry, recordCharge, UNMETERED, type Telemetry } from "../observability/telemetry.js";

import type { FinishView, LedgerOptions, LedgerService, SettleInput } from "./types.js";

export type { FinishView, LedgerOptions, LedgerService, PrepareInput, PrepareResult, SettleInput } from "./types.js";

/** Whether the gateway's own paid call holds `intent` ({@link PrepareInput.managed}): only the gateway finishes it. */
export const isManagedIntent = (intent: IntentRecord): boolean => (intent.request as { managed?: unknown } | null)?.managed === true;

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** The model a meter subject (`<provider>:<modelId>`) names. */
function modelOfSubject(subject: string): ModelRef {
  const colon = subject.indexOf(":");
  return { provider: subject.slice(0, colon), modelId: subject.slice(colon + 1) };
}

/** Re-tries of a `minAmount` reservation; each miss follows another caller's reservation, so this is never reached in practice. */
const MAX_FIT_ATTEMPTS = 32;

function fingerprint(value: unknown): string {
  const canonical = JSON.stringify(value, (_k, v: unknown) =>
    typeof v === "bigint"
      ? v.toString()
      : v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
  );
  return sha256Hex(canonical).slice(0, 32);
}

/** The metered part of a settle answer, as the origin client's `PaymentSettleResponse` types it. */
function pricedView(m: PricedMeter | undefined) {
  if (!m) return {};
  const p = m.priced;
  return {
    meterSubject: m.subject,
    lineItems: wireLineItems(p.lineItems),
    providerAmountWei: p.providerAmount.toString(),
    platformFeeWei: p.platformFee.toString(),
  };
}

/** The settle answer of `intent` settled with `finalAmount`. */
function settledView(intent: IntentRecord, finalAmount: bigint, priced: PricedMeter | undefined): FinishView {
  return {
    paymentIntentId: intent.intentId,
    status: "settled",
    maxAmountWei: intent.maxAmount.toString(),
    finalAmountWei: finalAmount.toString(),
    releasedWei: (intent.maxAmount - finalAmount).toString(),
    ...pricedView(priced),
    settlement: { status: finalAmount > 0n ? "queued" : "off_chain" },
  };
}

/**
 * Creates the ledger over a store and the catalog (catalog models are priced from their cards,
 * other subjects by the caller). `telemetry` counts budget refusals and the charges of `settle`
 * (not of `settleOwn`: the paid-call pipeline that calls it records its own, with the model).
 */
export function createLedgerService(deps: { store: Store; catalog: Catalog; clock: Clock; ids: IdGenerator; options: LedgerOptions; telemetry?: Telemetry }): LedgerService {
  const { store, catalog, clock, ids, options } = deps;
  const telemetry = deps.telemetry ?? noopTelemetry;
  /** Counts a refusal of the budget guards (402) or of the open-intent cap (429) on its way out. */
  const refused = (error: GatewayError) => {
    telemetry.budgetRefused(error.code === "model_budget_exhausted" || error.code === "too_many_open_intents" ? error.code : "budget_exhausted");
    return error;
  };

  /** The checks of the public settle and abort: a bearer of the intent's owner on its chain, and not an intent of the gateway's own paid call. */
  const publicIntent = (bearer: KeyRecord | null | undefined, intent: IntentRecord) => {
    if (bearer && bearer.owner !== intent.owner) throw new GatewayError("forbidden", "The bearer key belongs to another wallet than the intent.");
    if (bearer) assertKeyChain(bearer, intent.chainId, "the intent", "paymentIntentId");
    if (isManagedIntent(intent))
      throw new GatewayError("forbidden", `Payment intent ${intent.intentId} pays for a call this gateway serves; the gateway settles or releases it itself.`, {
        param: "paymentIntentId",
      });
  };

  const load = async (intentId: string): Promise<IntentRecord> => {
    const intent = await store.getIntent(intentId, clock.now());
    if (!intent) throw new GatewayError("intent_not_found", `Payment intent ${intentId} does not exist.`, { param: "paymentIntentId" });
    return intent;
  };

  const keyOf = async (intent: IntentRecord): Promise<{ key?: KeyRecord }> => {
    const key = await store.getKeyById(intent.keyId);
    return key ? { key } : {};
  };

  const stateError = (intent: IntentRecord, action: string) =>
    new GatewayError("invalid_state", `Payment intent ${intent.intentId} is ${intent.status}; it cannot be ${action}.`, { details: { status: intent.status } });

  /** What a per-model cap has left in the key's current window (a read; only for scoped retries). */
  async function scopeLeft(keyId: string, scope: { scope: string; limit: bigint }, key: KeyRecord, now: number): Promise<bigint> {
    const rec = (await store.getModelSpend(keyId)).find((r) => r.scope === scope.scope);
    if (!rec) return scope.limit;
    const lapsed = key.budgetPeriod !== undefined && (rec.periodStart ?? 0) < windowStart(key.budgetPeriod, now);
    return scope.limit - (lapsed ? 0n : rec.budgetUsed) - rec.budgetReserved;
  }

  /**
   * The guarded settle of `current` (as read, or as prepared by this process). `keep`: store the
   * answer so that a repeat replays it (the public route); the paid-call pipeline settles its own
   * intent once and stores none.
   */
  async function finishSettle(current: IntentRecord, finalAmount: bigint, priced: PricedMeter | undefined, videoJobOf: SettleInput["videoJob"], keep: boolean) {
    const now = clock.now();
    const view: FinishView = settledView(current, finalAmount, priced);
    const charge =
      finalAmount > 0n
        ? {
            chargeId: ids.next("ch"),
            intentId: current.intentId,
            keyId: current.keyId,
            owner: current.owner,
            chainId: current.chainId,
            amount: finalAmount,
            status: "queued" as const,
            createdAt: now,
          }
        : undefined;
    const videoJob = videoJobOf?.(view);
    const result = await store.settle({
      intentId: current.intentId,
      finalAmount,
      result: keep ? view : undefined,
      now,
      ...(charge ? { charge } : {}),
      ...(videoJob ? { videoJob } : {}),
    });
    if (result.ok) return { view, key: result.key, replay: false };
    if (result.reason === "not_found") throw new GatewayError("intent_not_found", `Payment intent ${current.intentId} does not exist.`);
    if (result.reason === "exceeds_reservation")
      throw new GatewayError("amount_exceeds_reservation", `finalAmountWei ${finalAmount} exceeds the reservation of ${result.intent.maxAmount}.`, {
        param: priced ? "meter" : "finalAmountWei",
        details: { maxAmountWei: result.intent.maxAmount.toString(), finalAmountWei: finalAmount.toString() },
      });
    const intent = result.intent;
    // A repeat replays the stored answer; an intent settled without one (a paid call's) replays its record.
    if (intent.status === "settled" && intent.finalAmount === finalAmount)
      return { view: (intent.result as FinishView | undefined) ?? settledView(intent, finalAmount, undefined), replay: true, ...(await keyOf(intent)) };
    if (intent.status === "settled")
      throw new GatewayError("invalid_state", `Payment intent ${intent.intentId} was already settled with ${intent.finalAmount}.`, {
        details: { status: "settled", finalAmountWei: String(intent.finalAmount) },
      });
    throw stateError(intent, "settled");
  }

  /** The guarded abort of an intent (as read, or as prepared by this process); a repeat replays the first abort's answer. */
  async function abortLoaded(current: IntentRecord, reason: string) {
    const view: FinishView = { paymentIntentId: current.intentId, status: "aborted", reason, releasedWei: current.maxAmount.toString() };
    const result = await store.abort({ intentId: current.intentId, reason, result: view, now: clock.now() });
    if (result.ok) return { view, key: result.key, replay: false };
    if (result.reason === "not_found") throw new GatewayError("intent_not_found", `Payment intent ${current.intentId} does not exist.`);
    if (result.intent.status === "aborted" && result.intent.result)
      return { view: result.intent.result as FinishView, replay: true, ...(await keyOf(result.intent)) };
    throw stateError(result.intent, "aborted");
  }

  return {
    async prepare(input) {
      const now = clock.now();
      assertUsable(input.key, now);
      if (input.chainId !== input.key.chainId)
        throw new GatewayError("chain_mismatch", `The key is for chain ${input.key.chainId}; the request names chain ${input.chainId}.`, {
          param: "x-network-id",
        });
      const metered = input.meter ? priceMeter(catalog, input.meter, options.feeBps) : undefined;
      const maxAmount = metered ? metered.priced.finalAmount : input.maxAmount!;
      // Allow-lists and caps govern catalog models; a meter the caller prices for its own service is not one.
      const model = input.model ?? (metered?.known ? modelOfSubject(metered.subject) : undefined);
      if (model) assertModelAllowed(input.key, model);
      const budgetScope = model ? budgetScopeFor(input.key, model) : undefined;
      if (maxAmount <= 0n) throw new GatewayError("invalid_request", "The meter prices to 0; nothing to reserve.", { param: "meter" });
      const request = {
        service: input.service,
        action: input.action,
        resource: input.resource,
        method: input.method,
        chainId: input.chainId,
        ...(input.runId === undefined ? {} : { runId: input.runId }),
        ...(input.meter === undefined ? { maxAmountWei: maxAmount.toString() } : { meter: input.meter }),
      };
      // The stored request also records the catalog model paid for (GET /api/usage groups spend by
      // it). The idempotency fingerprint covers a model named beside maxAmountWei too: a replay
      // naming another model is another call (its allow-list and cap differ), so a conflict.
      // Only an intent with an idempotency key can be replayed, so only it needs the hash.
      const print =
        input.idempotencyKey === undefined ? "" : fingerprint(input.model ? Object.assign({}, request, { model: `${input.model.provider}:${input.model.modelId}` }) : request);
      const recorded = model || input.managed ? Object.assign({}, request, model ? { modelId: model.modelId } : undefined, input.managed ? { managed: true } : undefined) : request;
      const reserve = (amount: bigint) =>
        store.reserve({
          intent: {
            intentId: ids.next("pi"),
            keyId: input.key.keyId,
            maxAmount: amount,
            fingerprint: print,
            request: amount === maxAmount ? recorded : Object.assign({}, recorded, { maxAmountWei: amount.toString() }),
            createdAt: now,
            expiresAt: now + Math.min(Math.max(options.intentTtlMs, input.ttlMs ?? 0), MAX_INTENT_LIFETIME_MS),
            ...(input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey }),
            ...(budgetScope ? { budgetScope } : {}),
          },
          now,
          ...(options.openIntentsPerKey === undefined ? {} : { openLimit: options.openIntentsPerKey }),
        });
      let result = await reserve(maxAmount);
      const floor = input.minAmount;
      if (floor !== undefined && input.idempotencyKey === undefined) {
        for (let attempt = 0; attempt < MAX_FIT_ATTEMPTS && !result.ok && (result.reason === "budget_exhausted" || result.reason === "model_budget_exhausted"); attempt++) {
          const left = min(remainingOf(result.key), budgetScope ? await scopeLeft(input.key.keyId, budgetScope, result.key, now) : remainingOf(result.key));
          if (left < floor || left <= 0n) break;
          result = await reserve(min(left, maxAmount));
        }
        if (!result.ok && result.reason === "budget_exhausted") throw refused(budgetExhausted(result.key, floor));
        if (!result.ok && result.reason === "model_budget_exhausted") throw refused(modelBudgetExhausted(result.key, budgetScope!.scope, floor));
      }
      if (result.ok) return { intent: result.intent, key: result.key, replay: false };
      switch (result.reason) {
        case "idempotent_replay":
          if (result.intent.fingerprint !== print)
            throw new GatewayError("idempotency_conflict", `Idempotency key "${input.idempotencyKey}" was used with different parameters.`, {
              param: "idempotencyKey",
              details: { paymentIntentId: result.intent.intentId },
            });
          return { intent: result.intent, key: result.key, replay: true };
        case "budget_exhausted":
          throw refused(budgetExhausted(result.key, maxAmount));
        case "model_budget_exhausted":
          throw refused(modelBudgetExhausted(result.key, budgetScope?.scope ?? "", maxAmount));
        case "too_many_open_intents":
          throw refused(
            new GatewayError("too_many_open_intents", `Key ${result.key.keyId} holds ${options.openIntentsPerKey} open payment intents, the most a key may hold at once; settle or abort some, or wait for calls in flight to finish.`, {
              details: { limit: options.openIntentsPerKey },
              headers: { "Retry-After": "1" },
            }),
          );
        case "key_not_found":
          throw new GatewayError("invalid_key");
        default:
          assertUsable(result.key, now);
          throw new GatewayError(result.reason);
      }
    },

    async settle(input) {
      const current = await load(input.intentId);
      publicIntent(input.bearer, current);
      const priced = input.meter ? priceMeter(catalog, input.meter, options.feeBps) : undefined;
      const finalAmount = priced ? priced.priced.finalAmount : input.finalAmount!;
      if (input.trace) input.trace.keyId ??= current.keyId;
      const settled = await finishSettle(current, finalAmount, priced, input.videoJob, true);
      // A caller-priced subject is any string a caller makes up: not a metric label.
      if (!settled.replay) recordCharge(telemetry, input.trace, priced?.known ? priced.subject : UNMETERED, finalAmount, "intent");
      return settled;
    },

    settleOwn: ({ intent, finalAmount, videoJob }) => finishSettle(intent, finalAmount, undefined, videoJob, false),

    async abort(input) {
      const current = await load(input.intentId);
      publicIntent(input.bearer, current);
      return abortLoaded(current, input.reason ?? "aborted");
    },

    abortOwn: ({ intent, reason }) => abortLoaded(intent, reason),

    async sweep(limit = 500, batches = 1) {
      let total = 0;
      for (let batch = 0; batch < batches; batch++) {
        if (batch > 0) await new Promise((resolve) => setTimeout(resolve, 0));
        const expired = await store.expireIntents(clock.now(), limit);
        total += expired;
        if (expired < limit) break;
      }
      return total;
    },
    async list(owner, { limit, cursor, keyId, chainId, status, now = clock.now() }) {
      const at = cursor ? decodeKeysetCursor(cursor) : undefined;
      const page = await store.listIntents(owner, {
        limit,
        now,
        ...(at ? { cursor: { createdAt: at.createdAt, intentId: at.id } } : {}),
        ...(keyId === undefined ? {} : { keyId }),
        ...(chainId === undefined ? {} : { chainId }),
        ...(status === undefined ? {} : { status }),
      });
      return { intents: page.intents, nextCursor: page.nextCursor ? encodeKeysetCursor(page.nextCursor.createdAt, page.nextCursor.intentId) : null };
    },
  };
}
