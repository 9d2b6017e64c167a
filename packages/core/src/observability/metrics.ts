/**
 * The gateway's Prometheus metrics on a registry of its own (never prom-client's global one, so
 * two gateways in one process keep separate counts). docs/operations.md lists every family.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { GroupCommitStats } from "../store/health-types.js";
import type { Telemetry } from "./telemetry.js";

/** Seconds; from a cached catalog answer (~1 ms) to a long model call. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** What the metrics need to know about the gateway besides the events they count. */
export interface MetricsSources {
  /**
   * Reservations (payment intents still `authorized` and not overdue) in the whole store, read at
   * scrape time; absent when the store cannot count them cheaply.
   */
  readonly openReservations?: (() => Promise<number>) | undefined;
  /** The store's group-commit counters (since it opened), read at scrape time; absent when it does not group writes. */
  readonly groupCommit?: (() => GroupCommitStats) | undefined;
  /** Also collect prom-client's process metrics (CPU, memory, event loop lag, GC). */
  readonly processMetrics?: boolean | undefined;
}

/** A gateway's metrics: the registry, the telemetry the services report to, and the request counters. */
export interface GatewayMetrics {
  /** The prom-client registry holding every family (empty when metrics are off). */
  readonly registry: Registry;
  /** The domain events, counted into the registry. */
  readonly telemetry: Telemetry;
  /** Counts one answered request: `route` is the route pattern (never the raw path), `seconds` its latency. */
  request(method: string, route: string, status: number, seconds: number): void;
}

/** Creates the metric families on a new registry. */
export function createGatewayMetrics(sources: MetricsSources = {}): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: "tollgate_http_requests_total",
    help: "Requests answered, by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    registers,
  });
  const duration = new Histogram({
    name: "tollgate_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer (to the end of the stream for server-sent events), by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const upstream = new Histogram({
    name: "tollgate_upstream_duration_seconds",
    help: "Upstream provider calls, by configured provider and outcome (ok, error): until the answer, or until a stream's first event.",
    labelNames: ["provider", "outcome"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const charged = new Counter({
    name: "tollgate_charged_usdc_atomic_total",
    help: "Amount charged in USDC atomic units (1 USDC = 1000000), by model subject (<provider>:<modelId>, or unmetered) and payment (key, x402, intent, direct).",
    labelNames: ["model", "payment"],
    registers,
  });
  const refusals = new Counter({
    name: "tollgate_budget_refusals_total",
    help: "Reservations or charges refused for lack of budget, or a reservation for lack of open-intent slots on its key, by reason.",
    labelNames: ["reason"],
    registers,
  });
  const verifications = new Counter({
    name: "tollgate_x402_verifications_total",
    help: "x402 payment signatures verified, by result (valid, or the refusal reason).",
    labelNames: ["result"],
    registers,
  });
  const lateTransfers = new Counter({
    name: "tollgate_x402_late_transfers_total",
    help: "x402 payments that landed on-chain after their call was answered 502 (not served), by network: each is owed a refund (the error log names it).",
    labelNames: ["network"],
    registers,
  });
  const batches = new Counter({
    name: "tollgate_settlement_batches_total",
    help: "Settlement batches run, by outcome (ok: it ran; error: it threw).",
    labelNames: ["outcome"],
    registers,
  });
  const groups = new Counter({
    name: "tollgate_settlement_groups_total",
    help: "(wallet, chain) groups of settlement batches, by outcome (settled, failed).",
    labelNames: ["outcome"],
    registers,
  });
  const fundingRefusals = new Counter({
    name: "tollgate_funding_refusals_total",
    help: "Key creations and budget raises refused because the wallet's allowance to the settlement spender or its balance does not cover its keys and queued charges.",
    registers,
  });
  const frozenWallets = new Counter({
    name: "tollgate_frozen_wallets_total",
    help: "Wallets a settlement batch found unable to pay their group, whose keys on that chain were cut to what they had committed.",
    registers,
  });
  const frozenKeys = new Counter({ name: "tollgate_frozen_keys_total", help: "Keys cut to what they had committed by those freezes.", registers });
  const count = sources.openReservations;
  if (count)
    new Gauge({
      name: "tollgate_open_reservations",
      help: "Payment intents holding a reservation (authorized, not yet expired) in the whole store, read at scrape time; NaN when the store cannot be read.",
      registers,
      async collect() {
        try {
          this.set(await count());
        } catch {
          this.set(Number.NaN);
        }
      },
    });
  const stats = sources.groupCommit;
  if (stats) {
    /** A counter whose total is the store's own count, copied at each scrape. */
    const mirror = (name: string, help: string, field: keyof GroupCommitStats) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(stats()[field]);
        },
      });
    mirror(
      "tollgate_store_commit_groups_total",
      "Store transactions that committed two or more ledger writes of one event-loop turn together (group commit).",
      "groups",
    );
    mirror("tollgate_store_grouped_writes_total", "Ledger writes committed in those transactions (divided by the groups: the mean group size).", "grouped");
    mirror("tollgate_store_group_retries_total", "Groups rolled back and re-run one write at a time because one write or the database refused.", "retried");
    mirror("tollgate_store_deadlocks_total", "Deadlocks the database reported (PostgreSQL); each victim was re-run.", "deadlocks");
  }
  if (sources.processMetrics) collectDefaultMetrics({ register: registry });

  return {
    registry,
    request(method, route, status, seconds) {
      const labels = { method, route, status };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    telemetry: {
      // Number() only here, at the metrics boundary: exact for sums below 2^53 atomic units (9 billion USDC).
      charged: (model, amount, payment) => charged.inc({ model, payment }, Number(amount)),
      budgetRefused: (reason) => refusals.inc({ reason }),
      fundingRefused: () => fundingRefusals.inc(),
      walletFrozen(keys) {
        frozenWallets.inc();
        frozenKeys.inc(keys);
      },
      x402Verified: (result) => verifications.inc({ result }),
      x402LateTransfer: (network) => lateTransfers.inc({ network }),
      settlementBatch(outcome) {
        batches.inc({ outcome: outcome.ok ? "ok" : "error" });
        if (!outcome.ok) return;
        if (outcome.settled > 0) groups.inc({ outcome: "settled" }, outcome.settled);
        if (outcome.failed > 0) groups.inc({ outcome: "failed" }, outcome.failed);
      },
      upstream: (provider, ms, ok) => upstream.observe({ provider, outcome: ok ? "ok" : "error" }, ms / 1000),
    },
  };
}

/** Metrics turned off: an empty registry, and nothing counted. */
export function disabledMetrics(telemetry: Telemetry): GatewayMetrics {
  return { registry: new Registry(), telemetry, request: () => undefined };
}
