/**
 * What the domain services report about their work, without knowing about HTTP, Prometheus or
 * logs: the gateway wires {@link Telemetry} to its prom-client registry (./metrics.ts), and the
 * request pipeline hands each paid call a {@link RequestTrace} that its log line reports.
 */

/** How a charge was paid: a key on a paid route, an x402 signature, a payment intent settled through the API, or the legacy settle-at-once. */
export type PaymentKind = "key" | "x402" | "intent" | "direct";

/** The budget refusals counted: a key's whole budget, or its per-model cap. */
export type BudgetRefusal = "budget_exhausted" | "model_budget_exhausted" | "too_many_open_intents";

/** The outcome of one settlement batch: it ran (with how many groups settled and failed), or it threw. */
export type SettlementBatchOutcome = { readonly ok: true; readonly settled: number; readonly failed: number } | { readonly ok: false };

/**
 * Events of the domain services. Every method is synchronous, must not throw, and is called at
 * most once per event; a service never waits on it.
 */
export interface Telemetry {
  /**
   * An amount moved to the gateway (USDC atomic units, > 0): `model` is a catalog subject
   * `<provider>:<modelId>`, or {@link UNMETERED} when the charge names no catalog model.
   */
  charged(model: string, amount: bigint, payment: PaymentKind): void;
  /** A reservation or charge was refused for lack of budget (the 402 answer follows). */
  budgetRefused(reason: BudgetRefusal): void;
  /** An x402 PAYMENT-SIGNATURE was verified: `"valid"`, or the refusal reason (`malformed`, `nonce_used`, …). */
  x402Verified(result: string): void;
  /** An x402 transfer landed on `network` after its call was answered 502 (not served): the payer is owed a refund. */
  x402LateTransfer(network: string): void;
  /** A settlement batch finished. */
  settlementBatch(outcome: SettlementBatchOutcome): void;
  /** A key write was refused because the wallet's allowance or balance does not cover it (402 `insufficient_funds`). */
  fundingRefused(): void;
  /** A batch found a wallet unable to pay its group and cut `keys` of its keys to what they committed. */
  walletFrozen(keys: number): void;
  /** One upstream provider call ended after `ms` milliseconds (`ok` false: it threw). `provider` is the configured provider name. */
  upstream(provider: string, ms: number, ok: boolean): void;
}

/** The model label of a charge that names no catalog model (a caller-priced meter, a bare amount). */
export const UNMETERED = "unmetered";

/** Telemetry that records nothing (metrics turned off, or a service built outside a gateway). */
export const noopTelemetry: Telemetry = {
  charged: () => undefined,
  budgetRefused: () => undefined,
  x402Verified: () => undefined,
  x402LateTransfer: () => undefined,
  settlementBatch: () => undefined,
  fundingRefused: () => undefined,
  walletFrozen: () => undefined,
  upstream: () => undefined,
};

/**
 * What handling one request learned that its log line reports. The pipeline creates one per
 * request; the paid-call pipeline fills it. All fields are optional: a route that bills nothing
 * leaves them unset.
 */
export interface RequestTrace {
  /** The service key the request was authenticated or billed with. */
  keyId?: string | undefined;
  /** The catalog subject (`<provider>:<modelId>`) the request paid for or asked for. */
  model?: string | undefined;
  /** What the request was charged, in USDC atomic units (summed if it paid twice). */
  amount?: bigint | undefined;
  /** How long its upstream provider call took, in milliseconds (until the answer, or the first streamed byte). */
  upstreamMs?: number | undefined;
}

/** Records a charge on the request's trace (when there is one) and in the metrics. */
export function recordCharge(telemetry: Telemetry, trace: RequestTrace | undefined, model: string, amount: bigint, payment: PaymentKind): void {
  if (amount <= 0n) return;
  if (trace) {
    trace.model = model;
    trace.amount = (trace.amount ?? 0n) + amount;
  }
  telemetry.charged(model, amount, payment);
}

/**
 * Runs one upstream provider call, timing it for the request's trace and the upstream latency
 * metric (`ok` false when it throws; the error is re-thrown as is).
 */
export async function timeUpstream<T>(telemetry: Telemetry, trace: RequestTrace | undefined, provider: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  let ok = false;
  try {
    const result = await run();
    ok = true;
    return result;
  } finally {
    const ms = performance.now() - started;
    if (trace) trace.upstreamMs = (trace.upstreamMs ?? 0) + ms;
    telemetry.upstream(provider, ms, ok);
  }
}
