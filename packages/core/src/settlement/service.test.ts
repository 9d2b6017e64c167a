import { afterEach, describe, expect, it, vi } from "vitest";
import { ChainError } from "../chain/types.js";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { GatewayOptionsError, type GatewayOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import { DEAD_CHAIN, makeKey, SOME_KEY } from "@tollgate/testing";
import { outcomeUnknown } from "./options.js";
import { secretsEqual } from "./service.js";

const SECRET = "0123456789abcdef";
const TREASURY = "0x00000000000000000000000000000000000000Fe";
const OWNER = "0x00000000000000000000000000000000000000a1";
const OTHER_KEY = `0x${"22".repeat(32)}` as const;

function optionIssues(options: GatewayOptions): readonly string[] {
  try {
    createGateway({ sweepIntervalMs: 0, ...options });
  } catch (error) {
    if (error instanceof GatewayOptionsError) return error.issues;
    throw error;
  }
  throw new Error("createGateway accepted the options");
}

describe("settlement and dispenser options", () => {
  it("report settlement problems, one line each", () => {
    expect(optionIssues({ settlement: { internalSecret: "short", treasury: "0x12", chains: [], leaseMs: 5 } })).toEqual([
      "settlement.internalSecret: must be at least 16 characters",
      "settlement.treasury: must be a 0x-prefixed 20-byte address",
      expect.stringMatching(/^settlement\.leaseMs: /),
    ]);
    expect(optionIssues({ chains: [DEAD_CHAIN], settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 5, spenderPrivateKey: SOME_KEY }, { chainId: 7, spenderPrivateKey: SOME_KEY }, { chainId: 7, spenderPrivateKey: OTHER_KEY }] } })).toEqual([
      "settlement.chains.0.chainId: chain 5 is not in options.chains (add { chainId, rpcUrl, usdc } there)",
      "settlement.chains.2.chainId: chain 7 is listed twice",
    ]);
    expect(optionIssues({ settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: "0x1234" as `0x${string}` }] } })).toEqual([
      "settlement.chains.0.spenderPrivateKey: must be a 0x-prefixed 32-byte hex private key",
    ]);
  });

  it("refuse one wallet as both dispenser and spender on a chain (their nonces would race)", () => {
    expect(
      optionIssues({
        chains: [DEAD_CHAIN],
        dispenser: { chains: [{ chainId: 7, privateKey: SOME_KEY }] },
        settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: SOME_KEY.toUpperCase().replace("0X", "0x") as `0x${string}` }] },
      }),
    ).toEqual(["settlement.chains.0.spenderPrivateKey: is also the dispenser wallet of chain 7; use another wallet"]);
  });

  it("report dispenser problems, one line each", () => {
    expect(optionIssues({ dispenser: { claimAmount: 0, chains: [] } })).toEqual([
      expect.stringMatching(/^dispenser\.claimAmount: /),
      expect.stringMatching(/^dispenser\.chains: /),
    ]);
    expect(optionIssues({ dispenser: { chains: [{ chainId: 9, privateKey: SOME_KEY }] } })).toEqual([
      "dispenser.chains.0.chainId: chain 9 is not in options.chains (add { chainId, rpcUrl, usdc } there)",
    ]);
  });

  it("describe what is enabled", async () => {
    const off = createGateway({ sweepIntervalMs: 0 });
    expect(off.describe()).toEqual(expect.arrayContaining([expect.stringMatching(/^dispenser: off/), expect.stringMatching(/^settlement: off/)]));
    const on = createGateway({
      sweepIntervalMs: 0,
      chains: [DEAD_CHAIN],
      dispenser: { chains: [{ chainId: 7, privateKey: SOME_KEY, paused: true }] },
      settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: OTHER_KEY }] },
    });
    const lines = on.describe().join("\n");
    expect(lines).toMatch(/dispenser: on, 1\.00 USDC per claim on chains 7 \(wallet 0x[0-9a-f]{40}, paused\)/);
    expect(lines).toMatch(new RegExp(`settlement: on, treasury ${TREASURY.toLowerCase()}, spender 0x[0-9a-f]{40} on chain 7, a batch every 600 s`));
    expect(on.services.settlement.spenders()).toEqual([{ chainId: 7, spender: expect.stringMatching(/^0x[0-9a-f]{40}$/) }]);
    const manual = createGateway({
      sweepIntervalMs: 0,
      chains: [DEAD_CHAIN],
      settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: OTHER_KEY }], intervalMs: false },
    });
    expect(manual.describe().join("\n")).toMatch(/on chain 7, batches on request/);
    await Promise.all([off.close(), on.close(), manual.close()]);
  });
});

describe("secretsEqual", () => {
  it("compares whole strings", () => {
    expect(secretsEqual(SECRET, SECRET)).toBe(true);
    expect(secretsEqual(SECRET, `${SECRET} `)).toBe(false);
    expect(secretsEqual(SECRET, SECRET.slice(0, -1))).toBe(false);
    expect(secretsEqual("", SECRET)).toBe(false);
    expect(secretsEqual("ü".repeat(16), "u".repeat(16))).toBe(false);
  });
});

describe("outcomeUnknown", () => {
  it("is false only for a ChainError that says nothing moved; any other failure may still land", () => {
    expect(outcomeUnknown(new ChainError("transferFrom reverted: ERC20: insufficient allowance", "ERC20: insufficient allowance", { nothingMoved: true }))).toBe(false);
    expect(outcomeUnknown(new ChainError("transferFrom (waiting for receipt of 0xabc) failed: timeout", undefined, { txHash: "0xabc" }))).toBe(true);
    expect(outcomeUnknown(new ChainError("transfer (sent as 0xabc; it may still land) failed: HTTP request failed."))).toBe(true);
    expect(outcomeUnknown(new Error("HTTP request failed."))).toBe(true);
    expect(outcomeUnknown("nope")).toBe(true);
  });
});

describe("settlement schedule (settlement.intervalMs)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs a batch every interval, one at a time, and stops on close", async () => {
    vi.useFakeTimers();
    const store = createMemoryStore();
    const claim = vi.spyOn(store, "claimCharges");
    const gateway = createGateway({
      store,
      clock: createManualClock(),
      sweepIntervalMs: 0,
      chains: [DEAD_CHAIN],
      settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: OTHER_KEY }], intervalMs: 5000 },
    });
    // A key from before settlement covered its chain (a new one there is refused): batches leave its charge out.
    const key = makeKey({ owner: OWNER, chainId: 8453, budgetLimit: 100n, expiresAt: Date.UTC(2027, 0, 1) });
    await store.insertKey(key);
    await gateway.services.keys.chargeDirect(key, 9n);
    await vi.advanceTimersByTimeAsync(4999);
    expect(claim).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(claim).toHaveBeenCalledTimes(1);
    expect(claim.mock.calls[0]![0]).toMatchObject({ chainIds: [7] });
    const [charge] = await store.listQueuedCharges({ limit: 5 });
    expect(charge).toMatchObject({ chainId: 8453, status: "queued" });
    expect(charge?.error).toBeUndefined();
    await vi.advanceTimersByTimeAsync(5000);
    expect(claim).toHaveBeenCalledTimes(2);
    await gateway.close();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(claim).toHaveBeenCalledTimes(2);
  });

  it("a scheduled batch whose groups fail warns, on the console when no logger is given, with its fields", async () => {
    const store = createMemoryStore();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const gateway = createGateway({
      store,
      sweepIntervalMs: 0,
      chains: [DEAD_CHAIN],
      settlement: { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: OTHER_KEY }], intervalMs: 1000 },
    });
    try {
      // A key on the dead chain (its RPC answers nothing): its charge cannot be collected.
      const key = makeKey({ owner: OWNER, chainId: 7, budgetLimit: 100n, expiresAt: Date.UTC(2027, 0, 1) });
      await store.insertKey(key);
      await gateway.services.keys.chargeDirect(key, 9n);
      for (let i = 0; i < 200 && warn.mock.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/1 of 1 groups failed/), expect.objectContaining({ failCount: 1, totalGroups: 1 }));
      const [charge] = await store.listQueuedCharges({ limit: 5 });
      expect(charge?.error).toMatch(/transferFrom failed/);
    } finally {
      await gateway.close();
      warn.mockRestore();
    }
  }, 20_000);

  it("runs every 10 minutes when no interval is given, and never with intervalMs: false", async () => {
    vi.useFakeTimers();
    const settlement = { internalSecret: SECRET, treasury: TREASURY, chains: [{ chainId: 7, spenderPrivateKey: OTHER_KEY }] };
    const scheduled = createMemoryStore();
    const manual = createMemoryStore();
    const claims = [vi.spyOn(scheduled, "claimCharges"), vi.spyOn(manual, "claimCharges")] as const;
    const gateways = [
      createGateway({ store: scheduled, clock: createManualClock(), sweepIntervalMs: 0, chains: [DEAD_CHAIN], settlement }),
      createGateway({ store: manual, clock: createManualClock(), sweepIntervalMs: 0, chains: [DEAD_CHAIN], settlement: Object.assign({ intervalMs: false as const }, settlement) }),
    ];
    await vi.advanceTimersByTimeAsync(599_999);
    expect(claims[0]).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(claims[0]).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(claims[1]).not.toHaveBeenCalled();
    await Promise.all(gateways.map((g) => g.close()));
  });
});
