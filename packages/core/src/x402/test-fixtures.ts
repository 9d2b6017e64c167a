/**
 * Test-only fixtures of the x402 tests: an anvil node with TestUSDC and a funded payer, a service
 * wired from real options, and client signatures made with the official x402 v2 client packages
 * (`@x402/core` x402Client + `@x402/evm` exact scheme, as a real x402 client does).
 */
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { privateKeyToAccount } from "viem/accounts";
import type { CapabilityDeps } from "../capability.js";
import { chainsOptionsSchema } from "../chain/options.js";
import type { Address, Chain, Hex } from "../chain/types.js";
import { createViemChain } from "../chain/viem-chain.js";
import type { Clock } from "../clock.js";
import { createFetchHttpClient, type HttpClient } from "../http/client.js";
import { randomIds } from "../ids.js";
import type { ResolvedOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import type { Store } from "../store/types.js";
import { deployTestUsdc, mintUsdc, startAnvil, type AnvilAccount, type AnvilNode } from "@tollgate/testing";
import { x402OptionsSchema, type FacilitatorOptions } from "./options.js";
import { createX402Service, type X402Service } from "./service.js";
import { consoleLogger } from "../observability/logger.js";
import { noopTelemetry, type Telemetry } from "../observability/telemetry.js";
import type { PaymentRequiredBody } from "./types.js";

/** A clock that follows the wall clock plus an adjustable offset (the official client signs with `Date.now()`). */
export interface OffsetClock extends Clock {
  offsetMs: number;
}
export const offsetClock = (): OffsetClock => {
  const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  return clock;
};

/** A running anvil with TestUSDC; account 1 is the facilitator wallet, 2 the funded payer, 3 payTo. */
export interface X402Env {
  readonly node: AnvilNode;
  readonly usdc: Address;
  readonly facilitator: AnvilAccount;
  readonly payer: AnvilAccount;
  readonly payTo: Address;
  /** A read-only chain for balance checks. */
  readonly chain: Chain;
  balances(): Promise<{ payer: bigint; payTo: bigint }>;
  stop(): Promise<void>;
}

/** The payer's starting balance (100 USDC). */
export const FUNDS = 100_000_000n;

const account = (node: AnvilNode, i: number): AnvilAccount => {
  const a = node.accounts[i];
  if (!a) throw new Error(`anvil has no account ${i}`);
  return a;
};

/** Starts anvil, deploys TestUSDC and mints {@link FUNDS} to the payer. */
export async function startX402Env(): Promise<X402Env> {
  const node = await startAnvil();
  const usdc = await deployTestUsdc(node);
  const payer = account(node, 2);
  await mintUsdc(node, usdc, payer.address, FUNDS);
  const payTo = account(node, 3).address;
  const chain = createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc });
  return {
    node,
    usdc,
    facilitator: account(node, 1),
    payer,
    payTo,
    chain,
    balances: async () => ({ payer: await chain.balanceOf(payer.address), payTo: await chain.balanceOf(payTo) }),
    stop: () => node.stop(),
  };
}

/** Builds a service from real (schema-validated) options, as `createGateway` would. */
export function makeService(
  env: { node: { rpcUrl: string; chainId: number }; usdc: Address; payTo: Address; facilitator: { privateKey: Hex } },
  opts: {
    clock?: Clock;
    store?: Store;
    facilitator?: FacilitatorOptions;
    http?: HttpClient;
    maxTimeoutSeconds?: number;
    settleCheckSeconds?: number;
    /** The late-transfer timer (default 0: off; tests call `checkLateTransfers()` themselves). */
    lateTransferCheckSeconds?: number;
    telemetry?: Telemetry;
  } = {},
): { service: X402Service; store: Store; describe: () => string[] } {
  const store = opts.store ?? createMemoryStore();
  const lines: (() => string)[] = [];
  const options = {
    chains: chainsOptionsSchema.parse([{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }]),
    x402: x402OptionsSchema.parse({
      payTo: env.payTo.toUpperCase().replace("0X", "0x"),
      networks: [{ chainId: env.node.chainId, facilitator: opts.facilitator ?? { type: "local", privateKey: env.facilitator.privateKey } }],
      ...(opts.maxTimeoutSeconds ? { maxTimeoutSeconds: opts.maxTimeoutSeconds } : {}),
      ...(opts.settleCheckSeconds === undefined ? {} : { settleCheckSeconds: opts.settleCheckSeconds }),
      lateTransferCheckSeconds: opts.lateTransferCheckSeconds ?? 0,
    }),
  } as unknown as ResolvedOptions;
  const deps = {
    store,
    clock: opts.clock ?? { now: () => Date.now() },
    ids: randomIds,
    http: opts.http ?? createFetchHttpClient(),
    options,
    onClose: () => {},
    describe: (line: () => string) => void lines.push(line),
    telemetry: opts.telemetry ?? noopTelemetry,
    logger: consoleLogger,
  } as unknown as CapabilityDeps;
  return { service: createX402Service(deps), store, describe: () => lines.map((l) => l()) };
}

/**
 * What a real x402 v2 client sends for `challenge`: `x402Client` with the `exact` EVM scheme
 * registered for `eip155:*` and a viem account, `createPaymentPayload(paymentRequired)` (it picks
 * the requirement and signs EIP-3009 under `extra.name`/`extra.version`), then the
 * `PAYMENT-SIGNATURE` encoding of `@x402/core/http`.
 */
export async function officialPaymentHeader(challenge: PaymentRequiredBody, privateKey: Hex): Promise<string> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  // TestUSDC is not one of the client's known default assets: allow it explicitly.
  client.setSpendControls({ allowedAssets: true });
  const payload = await client.createPaymentPayload(challenge as unknown as PaymentRequired);
  return encodePaymentSignatureHeader(payload);
}

/** A copy of `body` whose first offer has `patch` applied (to make a client sign something else). */
export function patchOffer(body: PaymentRequiredBody, patch: Record<string, unknown>): PaymentRequiredBody {
  const copy = structuredClone(body);
  const first = copy.accepts[0];
  if (!first) throw new Error("challenge has no offer");
  Object.assign(first, patch);
  return copy;
}
