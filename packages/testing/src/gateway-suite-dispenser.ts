/**
 * The dispenser route suite (docs/settlement.md "Dispenser") through `gateway.fetch` on a real store:
 * input checks and failure paths without a chain, then claims against a real anvil node with the
 * test USDC token (one node per suite). A store's test file runs it in one line:
 *
 * ```ts
 * runDispenserRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChainConfig } from "@tollgate/core";
import type { Address, Hex } from "@tollgate/core";
import { createViemChain } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import { deployTestUsdc, mintUsdc, startAnvil, type AnvilNode } from "./anvil.js";
import { expectError, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";

/** A chain id whose RPC refuses connections: every chain call fails at once. */
export const DEAD_CHAIN: ChainConfig = { chainId: 7, name: "Dead", rpcUrl: "http://127.0.0.1:9", usdc: "0x00000000000000000000000000000000000000c5" };
/** A well-formed private key of a wallet that owns nothing. */
export const SOME_KEY: Hex = `0x${"11".repeat(32)}`;

/** A fresh random address (lower-case). */
export function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Address;
}

/** An anvil node with the test USDC deployed, its `chains` entry, and a balance reader. */
export interface UsdcNode {
  readonly node: AnvilNode;
  readonly chain: ChainConfig;
  balanceOf(address: string): Promise<bigint>;
  mint(to: string, amount: bigint): Promise<void>;
}

/**
 * Registers `beforeAll`/`afterAll` hooks in the current describe block that start a USDC node
 * ({@link startUsdcNode}) and stop it; the returned function gives the node inside its tests.
 */
export function usdcNodePerSuite(): () => UsdcNode {
  let usdc: UsdcNode | undefined;
  beforeAll(async () => {
    usdc = await startUsdcNode();
  });
  afterAll(() => usdc?.node.stop());
  return () => {
    if (!usdc) throw new Error("the USDC node is started by beforeAll; read it inside a test");
    return usdc;
  };
}

/** Starts anvil and deploys the test USDC (for `beforeAll`; call `node.stop()` after). */
export async function startUsdcNode(): Promise<UsdcNode> {
  const node = await startAnvil();
  try {
    const usdc = await deployTestUsdc(node);
    const reader = createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc, pollingIntervalMs: 50 });
    return {
      node,
      chain: { chainId: node.chainId, name: "Anvil", rpcUrl: node.rpcUrl, usdc },
      balanceOf: (address) => reader.balanceOf(address as Address),
      mint: async (to, amount) => void (await mintUsdc(node, usdc, to as Address, amount)),
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

const CLAIM = "/api/dispenser/claim";

/** Registers the dispenser route suite for the store `name` in the current vitest file. */
export function runDispenserRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, extra: Partial<GatewayOptions>, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn, extra));
  const dead: Partial<GatewayOptions> = { chains: [DEAD_CHAIN], dispenser: { chains: [{ chainId: DEAD_CHAIN.chainId, privateKey: SOME_KEY }] } };
  const claim = (h: Harness, body: unknown) => h.call("POST", CLAIM, { body });

  describe(`dispenser routes: ${name}`, () => {
    test("not configured: a valid claim is 503, an invalid body a 400 first; status lists the chains as unconfigured", { chains: [DEAD_CHAIN] }, async (h) => {
      expectError(await claim(h, { address: freshAddress(), chainId: DEAD_CHAIN.chainId }), 503, "not_configured");
      // The body is validated before the dispenser says it is off.
      expectError(await claim(h, { address: "nope" }), 400, "invalid_request", "address");
      expectError(await claim(h, { address: freshAddress() }), 400, "invalid_request", "chainId");
      const status = await h.call("GET", "/api/dispenser/status");
      expect(status.status).toBe(200);
      expect(status.body).toEqual({
        dispensers: [
          {
            chainId: 7,
            chainName: "Dead",
            dispenserAddress: null,
            usdcAddress: DEAD_CHAIN.usdc,
            balance: null,
            dispenserBalance: null,
            dispenserBalanceFormatted: null,
            totalClaims: 0,
            maxClaims: null,
            remainingClaims: 0,
            isPaused: false,
            isConfigured: false,
          },
        ],
        claimAmount: 1000000,
        claimAmountFormatted: "$1.00 USDC",
        maxClaims: 0,
      });
      const one = await h.call("GET", "/api/dispenser/status/7");
      expect(one.status).toBe(404);
      expect(one.body).toEqual({ available: false, reason: "The dispenser is not configured." });
      const address = freshAddress();
      expect((await h.call("GET", `/api/dispenser/check/${address}`)).body).toEqual({ address, hasClaimed: false, claims: [] });
    });

    test("bad input is a 400 naming the field", dead, async (h) => {
      expectError(await claim(h, { address: "0x1234", chainId: 7 }), 400, "invalid_request", "address");
      // Mixed case must be the EIP-55 checksummed form (all lower- or upper-case is fine).
      expectError(await claim(h, { address: "0x1234567890aBcdEF1234567890aBcdef12345678", chainId: 7 }), 400, "invalid_request", "address");
      expectError(await claim(h, { chainId: 7 }), 400, "invalid_request", "address");
      expectError(await claim(h, { address: freshAddress() }), 400, "invalid_request", "chainId");
      expectError(await claim(h, { address: freshAddress(), chainId: "seven" }), 400, "invalid_request", "chainId");
      expectError(await claim(h, { address: freshAddress(), chainId: -7 }), 400, "invalid_request", "chainId");
      expectError(await h.call("POST", CLAIM, { raw: "{not json" }), 400, "invalid_request");
      // A chain without a dispenser (known to options.chains or not).
      const e = expectError(await claim(h, { address: freshAddress(), chainId: 8453 }), 400, "invalid_request", "chainId");
      expect(e.message).toContain("No dispenser on chain 8453");
      expectError(await h.call("GET", "/api/dispenser/check/0xnothex"), 400, "invalid_request", "address");
      expectError(await h.call("GET", "/api/dispenser/status/abc"), 400, "invalid_request", "chainId");
      const none = await h.call("GET", "/api/dispenser/status/8453");
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ available: false, reason: "No dispenser is configured on chain 8453." });
      expectError(await h.call("GET", CLAIM), 405, "method_not_allowed");
    });

    test("a failed transfer is a 502 and leaves the address claimable; a dead RPC shows as a null balance", dead, async (h) => {
      const address = freshAddress();
      for (let i = 0; i < 2; i++) {
        const e = expectError(await claim(h, { address, chainId: 7 }), 502, "upstream_error");
        expect(e.message).toContain("may claim again");
      }
      expect((await h.call("GET", `/api/dispenser/check/${address}`)).body).toEqual({ address, hasClaimed: false, claims: [] });
      const status = await h.call("GET", "/api/dispenser/status/7");
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({
        available: true,
        status: { chainId: 7, dispenserAddress: privateKeyToAccount(SOME_KEY).address.toLowerCase(), balance: null, totalClaims: 0, remainingClaims: null, isConfigured: true },
      });
      expect(status.body.status.error).toMatch(/balance unavailable/);
    });

    test("a paused chain refuses claims with 503 and says so in its status", { chains: [DEAD_CHAIN], dispenser: { chains: [{ chainId: 7, privateKey: SOME_KEY, paused: true, maxClaims: 5 }] } }, async (h) => {
      const e = expectError(await claim(h, { address: freshAddress(), chainId: 7 }), 503, "not_configured");
      expect(e.details).toEqual({ reason: "paused", chainId: 7 });
      const status = await h.call("GET", "/api/dispenser/status");
      expect(status.body.dispensers[0]).toMatchObject({ isPaused: true, isConfigured: true, maxClaims: 5, totalClaims: 0, dispenserBalance: null, dispenserBalanceFormatted: null });
      // The origin API's top-level figures: the formatted claim amount and the chains' claim cap.
      expect(status.body).toMatchObject({ claimAmount: 1000000, claimAmountFormatted: "$1.00 USDC", maxClaims: 5 });
    });

    describe("on anvil", () => {
      const usdc = usdcNodePerSuite();
      const funded = (index: number, extra: { maxClaims?: number; claimAmount?: number } = {}): Partial<GatewayOptions> => ({
        chains: [usdc().chain],
        dispenser: { ...(extra.claimAmount ? { claimAmount: extra.claimAmount } : {}), chains: [{ chainId: usdc().chain.chainId, privateKey: usdc().node.accounts[index]!.privateKey, ...(extra.maxClaims ? { maxClaims: extra.maxClaims } : {}) }] },
      });
      const run = (title: string, extra: () => Partial<GatewayOptions>, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn, extra()));

      run("a claim sends 1.00 USDC once; a repeat is 409 with alreadyClaimed and the error envelope", () => funded(1), async (h) => {
        const wallet = usdc().node.accounts[1]!.address;
        await usdc().mint(wallet, 5_000_000n);
        const address = freshAddress();
        const mixed = address.replace(/[a-f]/g, (c) => c.toUpperCase()).replace(/^0X/, "0x");
        const ok = await claim(h, { address: mixed, chainId: String(usdc().chain.chainId) });
        expect(ok.status, JSON.stringify(ok.body)).toBe(200);
        expect(ok.body).toEqual({ success: true, claimAmount: 1000000, chainId: usdc().chain.chainId, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
        expect(await usdc().balanceOf(address)).toBe(1_000_000n);
        const again = await claim(h, { address, chainId: usdc().chain.chainId });
        expect(again.status).toBe(409);
        expect(again.body).toEqual({
          success: false,
          alreadyClaimed: true,
          claimAmount: 1000000,
          error: {
            code: "already_claimed",
            message: `${address} has already claimed on chain ${usdc().chain.chainId}.`,
            type: "conflict_error",
            details: { address, chainId: usdc().chain.chainId, status: "claimed", txHash: ok.body.txHash, claimedAt: h.clock.now() },
            requestId: again.headers.get("x-request-id"),
          },
        });
        expect((await h.call("GET", `/api/dispenser/check/${mixed}`)).body).toEqual({
          address,
          hasClaimed: true,
          claims: [{ chainId: usdc().chain.chainId, claimedAt: h.clock.now(), txHash: ok.body.txHash, status: "claimed" }],
        });
        const status = await h.call("GET", "/api/dispenser/status");
        expect(status.body).toEqual({
          dispensers: [
            {
              chainId: usdc().chain.chainId,
              chainName: "Anvil",
              dispenserAddress: wallet,
              usdcAddress: usdc().chain.usdc,
              balance: "4000000",
              dispenserBalance: "4000000",
              dispenserBalanceFormatted: "$4.00 USDC",
              totalClaims: 1,
              maxClaims: null,
              remainingClaims: Number((await usdc().balanceOf(wallet)) / 1_000_000n),
              isPaused: false,
              isConfigured: true,
            },
          ],
          claimAmount: 1000000,
          claimAmountFormatted: "$1.00 USDC",
          maxClaims: null,
        });
        expect(await usdc().balanceOf(address)).toBe(1_000_000n);
      });

      run("20 concurrent claims of one address: exactly one transfer, 19 × 409", () => funded(2), async (h) => {
        await usdc().mint(usdc().node.accounts[2]!.address, 50_000_000n);
        const address = freshAddress();
        const replies = await Promise.all(Array.from({ length: 20 }, () => claim(h, { address, chainId: usdc().chain.chainId })));
        expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
        const conflicts = replies.filter((r) => r.status === 409);
        expect(conflicts).toHaveLength(19);
        for (const r of conflicts) expect(r.body).toMatchObject({ success: false, alreadyClaimed: true, claimAmount: 1000000, error: { code: "already_claimed" } });
        expect(await usdc().balanceOf(address)).toBe(1_000_000n);
      });

      run("a wallet without USDC: the claim fails with 502 and succeeds once the wallet is funded", () => funded(3), async (h) => {
        const address = freshAddress();
        const e = expectError(await claim(h, { address, chainId: usdc().chain.chainId }), 502, "upstream_error");
        expect(e.details).toEqual({ chainId: usdc().chain.chainId, outcomeUnknown: false });
        expect((await h.call("GET", `/api/dispenser/check/${address}`)).body.hasClaimed).toBe(false);
        await usdc().mint(usdc().node.accounts[3]!.address, 1_000_000n);
        expect((await claim(h, { address, chainId: usdc().chain.chainId })).status).toBe(200);
        expect(await usdc().balanceOf(address)).toBe(1_000_000n);
      });

      run("maxClaims caps the chain (503 once reached) and a custom claimAmount is sent", () => funded(4, { maxClaims: 2, claimAmount: 250_000 }), async (h) => {
        await usdc().mint(usdc().node.accounts[4]!.address, 10_000_000n);
        const [a, b, c] = [freshAddress(), freshAddress(), freshAddress()];
        for (const address of [a, b]) expect((await claim(h, { address, chainId: usdc().chain.chainId })).body).toMatchObject({ success: true, claimAmount: 250000 });
        const e = expectError(await claim(h, { address: c, chainId: usdc().chain.chainId }), 503, "not_configured");
        expect(e.details).toEqual({ reason: "max_claims_reached", chainId: usdc().chain.chainId, maxClaims: 2 });
        expect(await usdc().balanceOf(a)).toBe(250_000n);
        expect(await usdc().balanceOf(c)).toBe(0n);
        const status = await h.call("GET", `/api/dispenser/status/${usdc().chain.chainId}`);
        expect(status.body).toMatchObject({
          available: true,
          status: { totalClaims: 2, maxClaims: 2, remainingClaims: 0, dispenserBalance: "9500000", dispenserBalanceFormatted: "$9.50 USDC" },
        });
        expect((await h.call("GET", "/api/dispenser/status")).body).toMatchObject({ claimAmount: 250000, claimAmountFormatted: "$0.25 USDC", maxClaims: 2 });
      });
    });
  });
}
