/** Unit tests: header codec, malformed PAYMENT-SIGNATURE refusals, options, the disabled service. */
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import type { CapabilityDeps } from "../capability.js";
import { bytesToBase64 } from "../encoding.js";
import { GatewayError } from "../errors.js";
import { GatewayOptionsError, type ResolvedOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import { decodeHeader, encodeHeader } from "./codec.js";
import { x402OptionsSchema } from "./options.js";
import { createX402Service } from "./service.js";
import { makeService } from "./test-fixtures.js";

// Nothing listens on port 9: any refusal below must be decided before touching the chain.
const OFFLINE = {
  node: { rpcUrl: "http://127.0.0.1:9", chainId: 31337 },
  usdc: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  payTo: "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  facilitator: { privateKey: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" },
} as const;
const b64 = (text: string) => bytesToBase64(new TextEncoder().encode(text));
const price = { amount: 1000n, resourceUrl: "https://gw.test/v1/images/generations", description: "image", mimeType: "application/json", requestId: "req_1" };

const validPayload = {
  x402Version: 2,
  resource: { url: price.resourceUrl },
  accepted: { scheme: "exact", network: "eip155:31337", amount: "1000", asset: OFFLINE.usdc, payTo: OFFLINE.payTo, maxTimeoutSeconds: 300, extra: { name: "USD Coin", version: "2" } },
  payload: {
    signature: `0x${"11".repeat(65)}`,
    authorization: { from: OFFLINE.payTo, to: OFFLINE.payTo, value: "1000", validAfter: "0", validBefore: "9999999999", nonce: `0x${"22".repeat(32)}` },
  },
};

describe("x402 header codec", () => {
  it("round-trips JSON (unicode and bigints included) and interoperates with @x402/core's encoding", () => {
    const value = { x402Version: 2, text: "café ☕ — 支付", n: 12n };
    const header = encodeHeader(value);
    expect(header).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(decodeHeader(header)).toEqual({ ok: true, value: { ...value, n: "12" } });
    expect(decodePaymentRequiredHeader(encodeHeader(validPayload))).toEqual(validPayload);
    expect(decodeHeader(encodePaymentSignatureHeader(validPayload as never))).toEqual({ ok: true, value: validPayload });
    expect(decodePaymentSignatureHeader(encodeHeader(validPayload))).toEqual(validPayload);
  });

  it("returns a value, not an exception, for malformed input", () => {
    expect(decodeHeader("")).toMatchObject({ ok: false, message: "the header is empty" });
    expect(decodeHeader("%%%not base64%%%")).toMatchObject({ ok: false, message: "the header is not base64" });
    expect(decodeHeader(bytesToBase64(new Uint8Array([0xff, 0xfe, 0xfd])))).toMatchObject({ ok: false, message: "the header does not decode to UTF-8 text" });
    expect(decodeHeader(b64("{not json"))).toMatchObject({ ok: false, message: "the header does not decode to JSON" });
    expect(decodeHeader("A".repeat(20_000))).toMatchObject({ ok: false });
  });
});

describe("x402 verify refuses malformed headers before any chain access", () => {
  const { service } = makeService(OFFLINE);
  const cases: [string, string, string][] = [
    ["not base64", "***", "not base64"],
    ["not JSON", b64("hello"), "not decode to JSON"],
    ["JSON but not an object", b64("42"), "x402Version must be 2"],
    ["x402Version 1", b64(JSON.stringify({ ...validPayload, x402Version: 1 })), "x402Version must be 2"],
    ["missing accepted", b64(JSON.stringify({ ...validPayload, accepted: undefined })), "accepted"],
    ["missing payload", b64(JSON.stringify({ ...validPayload, payload: undefined })), "payload"],
    ["accepted without amount", b64(JSON.stringify({ ...validPayload, accepted: { ...validPayload.accepted, amount: undefined } })), "accepted.amount"],
  ];
  it.each(cases)("%s → malformed", async (_name, header, message) => {
    const r = await service.verify({ ...price, header });
    expect(r).toMatchObject({ ok: false, reason: "malformed" });
    expect(r.ok ? "" : r.message).toContain(message);
  });

  it("refuses another scheme and an unconfigured network by value", async () => {
    const scheme = b64(JSON.stringify({ ...validPayload, accepted: { ...validPayload.accepted, scheme: "upto" } }));
    expect(await service.verify({ ...price, header: scheme })).toMatchObject({ ok: false, reason: "unsupported_scheme" });
    const network = b64(JSON.stringify({ ...validPayload, accepted: { ...validPayload.accepted, network: "eip155:8453" } }));
    const r = await service.verify({ ...price, header: network });
    expect(r).toMatchObject({ ok: false, reason: "wrong_network" });
    expect(r.ok ? "" : r.message).toContain("eip155:31337");
  });
});

describe("x402 options", () => {
  it("lower-cases payTo, rejects duplicate chains, unknown keys and bad facilitators", () => {
    const ok = x402OptionsSchema.parse({ payTo: OFFLINE.payTo.toUpperCase().replace("0X", "0x"), networks: [{ chainId: 1, facilitator: { type: "http", url: "https://f.test" } }] });
    expect(ok?.payTo).toBe(OFFLINE.payTo);
    const bad = x402OptionsSchema.safeParse({
      payTo: "0x12",
      networks: [
        { chainId: 1, facilitator: { type: "local", privateKey: "0x1" } },
        { chainId: 1, facilitator: { type: "http", url: "ftp://x" } },
      ],
      extra: true,
    });
    expect(bad.success).toBe(false);
    const paths = bad.error?.issues.map((i) => i.path.join(".")) ?? [];
    expect(paths).toEqual(expect.arrayContaining(["payTo", "networks.0.facilitator.privateKey", "networks.1.facilitator.url"]));
    expect(x402OptionsSchema.safeParse({ payTo: OFFLINE.payTo, networks: [] }).success).toBe(false);
  });

  it("a network whose chain is not in options.chains is an option error naming it", () => {
    const deps = {
      store: createMemoryStore(),
      clock: { now: () => 0 },
      options: { chains: [], x402: x402OptionsSchema.parse({ payTo: OFFLINE.payTo, networks: [{ chainId: 8453, facilitator: { type: "http", url: "https://f.test" } }] }) } as unknown as ResolvedOptions,
      describe: () => {},
    } as unknown as CapabilityDeps;
    expect(() => createX402Service(deps)).toThrow(GatewayOptionsError);
    expect(() => createX402Service(deps)).toThrow(/x402\.networks\.0\.chainId: chain 8453 is not listed in options\.chains/);
  });

  it("without options.x402 the service is disabled and says how to configure it", async () => {
    const lines: string[] = [];
    const deps = { options: {} as ResolvedOptions, describe: (l: () => string) => lines.push(l()) } as unknown as CapabilityDeps;
    const service = createX402Service(deps);
    expect(service.enabled).toBe(false);
    const input = { ...price, error: "payment required", header: "x" };
    for (const call of [service.challenge(input), service.verify(input), service.offers(input)]) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: "not_configured", status: 503 });
      expect((error as Error).message).toMatch(/^x402 is not configured: set options\.x402/);
    }
    expect(lines).toEqual([expect.stringContaining("x402: off")]);
  });
});
