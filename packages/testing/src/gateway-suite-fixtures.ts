/**
 * The harness of the gateway route suites: a real store behind `createGateway` with a manual
 * clock, driven only through `gateway.fetch(new Request(…))`, plus checks of the documented
 * error envelope and of a key's budget as the wire shows it.
 */
import { expect } from "vitest";
import { createManualClock, type ManualClock } from "@tollgate/core";
import { createGateway } from "@tollgate/core";
import type { Gateway } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import type { GatewayServices } from "@tollgate/core";
import type { Store } from "@tollgate/core";

/** Options of the route suites. */
export interface GatewaySuiteOptions {
  /** Creates a fresh, empty store; called once per test. The gateway closes it. */
  createStore: () => Promise<Store> | Store;
}

export const DAY = 86_400_000;
export const CHAIN = 8453;
/** Owner wallets (sent in mixed case where it matters; stored lower-case). */
export const OWNER = "0x00000000000000000000000000000000000000a1";
export const OWNER_MIXED = "0x00000000000000000000000000000000000000A1";
export const OTHER = "0x00000000000000000000000000000000000000b2";
/** The internal secret of the suites' gateways: a host app acting for the wallet it names. */
export const INTERNAL_SECRET = "suite-internal-secret-0123456789";
/** Headers that name and prove `address` as the host app does (x-internal-secret). */
export const asWallet = (address: string = OWNER): Record<string, string> => ({ "x-session-user-address": address, "x-internal-secret": INTERNAL_SECRET });
/** A token of the right shape that no store knows. */
export const UNKNOWN_TOKEN = `svc-${"A".repeat(43)}`;

/** A response read once: status, headers and the parsed JSON body (null when empty). */
export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** What a request takes: headers, and a JSON body (`body`) or raw text (`raw`). */
export interface CallInit {
  headers?: Record<string, string>;
  body?: unknown;
  raw?: string;
}

/** One gateway over one fresh store, with helpers that speak HTTP to it. */
export interface Harness {
  readonly gateway: Gateway<GatewayServices>;
  readonly clock: ManualClock;
  call(method: string, path: string, init?: CallInit): Promise<Reply>;
  /** POST /api/keys proven with the internal secret (asserts 201); `fields` overlay an api key of 1000 on {@link CHAIN} expiring in a day. */
  createKey(fields?: Record<string, unknown>, owner?: string): Promise<any>;
  /** GET /api/keys/{keyId} with `token` (asserts 200); the key view. */
  inspect(token: string, keyId: string): Promise<any>;
  /** POST /api/payments/prepare with `Bearer token` and `x-network-id: CHAIN` unless overridden. */
  prepare(token: string, fields?: Record<string, unknown>, headers?: Record<string, string>): Promise<Reply>;
  /** POST /api/payments/settle (no credential unless `headers` has one). */
  settle(fields: Record<string, unknown>, headers?: Record<string, string>): Promise<Reply>;
  /** POST /api/payments/abort (no credential unless `headers` has one). */
  abort(fields: Record<string, unknown>, headers?: Record<string, string>): Promise<Reply>;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** The prepare body of the suites: 300 atoms for an inference call. */
export const PREPARE = { service: "inference", action: "chat", resource: "https://api.example.com/v1/chat", method: "POST", maxAmountWei: "300" } as const;

/** Runs `fn` against a fresh gateway (manual clock, no background sweeper) and closes it. */
export async function withGateway(options: GatewaySuiteOptions, fn: (h: Harness) => Promise<void>, extra: Partial<GatewayOptions> = {}): Promise<void> {
  const store = await options.createStore();
  const clock = createManualClock();
  const gateway = createGateway({ store, clock, sweepIntervalMs: 0, internalSecret: INTERNAL_SECRET, ...extra });
  const call = async (method: string, path: string, init: CallInit = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined;
    if (init.raw !== undefined) body = init.raw;
    else if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined) headers["content-type"] ??= "application/json";
    const res = await gateway.fetch(new Request(`http://gateway.test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }));
    const text = await res.text();
    expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9_.:-]{1,128}$/);
    return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) };
  };
  const h: Harness = {
    gateway,
    clock,
    call,
    async createKey(fields = {}, owner = OWNER) {
      const body = { budgetLimit: "1000", expiresAt: clock.now() + DAY, networkId: CHAIN, purpose: "api", ...fields };
      const r = await call("POST", "/api/keys", { headers: asWallet(owner), body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    },
    async inspect(token, keyId) {
      const r = await call("GET", `/api/keys/${keyId}`, { headers: bearer(token) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    },
    prepare: (token, fields = PREPARE, headers = {}) =>
      call("POST", "/api/payments/prepare", { headers: { ...bearer(token), "x-network-id": String(CHAIN), ...headers }, body: fields }),
    settle: (fields, headers = {}) => call("POST", "/api/payments/settle", { headers, body: fields }),
    abort: (fields, headers = {}) => call("POST", "/api/payments/abort", { headers, body: fields }),
  };
  try {
    await fn(h);
  } finally {
    await gateway.close();
  }
}

/**
 * Asserts an error envelope (docs/api.md "Errors"): `status`, `error.code`, a message, an OpenAI `type`, the
 * `requestId` of the `x-request-id` header, and `param` when given (`null`: no param).
 */
export function expectError(r: Reply, status: number, code: string, param?: string | null): any {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body ?? {})).toEqual(["error"]);
  const e = r.body.error;
  expect(e.code).toBe(code);
  expect(typeof e.message).toBe("string");
  expect(e.message.length).toBeGreaterThan(0);
  expect(typeof e.type).toBe("string");
  expect(e.requestId).toBe(r.headers.get("x-request-id"));
  for (const k of Object.keys(e)) expect(["code", "message", "type", "param", "details", "requestId"]).toContain(k);
  if (param === null) expect(e.param).toBeUndefined();
  else if (param !== undefined) expect(e.param).toBe(param);
  return e;
}

/** The `x-key-budget-*` headers of a reply, as strings (undefined when absent). */
export function budgetOf(r: Reply) {
  const get = (n: string) => r.headers.get(`x-key-budget-${n}`) ?? undefined;
  return { limit: get("limit"), used: get("used"), reserved: get("reserved"), remaining: get("remaining") };
}

/** Asserts a key view's budget fields. */
export function expectBudget(view: any, budget: { limit: string; used: string; reserved: string }): void {
  const remaining = (BigInt(budget.limit) - BigInt(budget.used) - BigInt(budget.reserved)).toString();
  expect({ limit: view.budgetLimit, used: view.budgetUsed, reserved: view.budgetReserved, remaining: view.budgetRemaining }).toEqual({ ...budget, remaining });
}
