/** `client.dispenser`: test USDC, once per (address, chain) (docs/settlement.md "Dispenser"). No credential. */
import type { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";

/** A successful claim. */
export interface DispenserClaim {
  success: true;
  /** Atomic units (1000000 = 1.00 USDC by default). */
  claimAmount: number;
  chainId: number;
  txHash: string;
}

/** One chain's dispenser. */
export interface DispenserChainStatus {
  chainId: number;
  chainName: string;
  /** Lower-case; null when the chain has no dispenser. */
  dispenserAddress: string | null;
  usdcAddress: string;
  /** Live USDC balance (atomic units, decimal string); null when it could not be read (see `error`). */
  balance: string | null;
  /** The same as `balance` (the origin API's name). */
  dispenserBalance: string | null;
  /** `balance` formatted exactly, e.g. `"$12.50 USDC"`; null when unknown. */
  dispenserBalanceFormatted: string | null;
  totalClaims: number;
  /** null = unlimited. */
  maxClaims: number | null;
  remainingClaims: number | null;
  isPaused: boolean;
  isConfigured: boolean;
  error?: string;
}

/** Every chain's dispenser. */
export interface DispenserStatus {
  dispensers: DispenserChainStatus[];
  /** Atomic units per claim. */
  claimAmount: number;
  /** `claimAmount` formatted exactly, e.g. `"$1.00 USDC"`. */
  claimAmountFormatted: string;
  /** The largest `maxClaims` of the dispenser chains; 0 when none is configured; null when one is unlimited. */
  maxClaims: number | null;
}

/** One chain's status: available, or why not (a 404 answer, returned as a value). */
export type DispenserChainAvailability = { available: true; status: DispenserChainStatus } | { available: false; reason: string };

/** Whether an address has claimed, per chain (`status: "pending"` while a transfer is under way). */
export interface DispenserCheck {
  address: string;
  hasClaimed: boolean;
  claims: { chainId: number; claimedAt: number | null; txHash: string | null; status: string }[];
}

/** The `client.dispenser` group. */
export interface DispenserResource {
  /**
   * Sends the claim amount to `address` on `chainId`. A repeat throws `ConflictError` (code
   * `already_claimed`; its `body` has `alreadyClaimed: true` and `claimAmount`); 503
   * `not_configured` when off, paused or out of claims; 502 when the transfer failed (the address
   * may claim again). Not retried after a connection error or timeout.
   */
  claim(params: { address: string; chainId: number }, options?: RequestOptions): APIPromise<DispenserClaim>;
  /** Status of every chain. */
  status(options?: RequestOptions): APIPromise<DispenserStatus>;
  /** Status of one chain; `{available:false, reason}` (a 404) is a value, not an error. */
  chainStatus(chainId: number, options?: RequestOptions): APIPromise<DispenserChainAvailability>;
  /** Whether `address` has claimed. */
  check(address: string, options?: RequestOptions): APIPromise<DispenserCheck>;
}

const unavailable = (status: number, body: unknown) =>
  status === 404 && typeof body === "object" && body !== null && (body as { available?: unknown }).available === false;

/** Builds `client.dispenser`. */
export function dispenserResource(caller: Caller): DispenserResource {
  return {
    claim: (params, options) => caller.call({ method: "POST", path: "/api/dispenser/claim", body: params, idempotent: false }, options),
    status: (options) => caller.call({ method: "GET", path: "/api/dispenser/status", idempotent: true }, options),
    chainStatus: (chainId, options) => caller.call({ method: "GET", path: `/api/dispenser/status/${segment(chainId)}`, idempotent: true, accept: unavailable }, options),
    check: (address, options) => caller.call({ method: "GET", path: `/api/dispenser/check/${segment(address)}`, idempotent: true }, options),
  };
}
