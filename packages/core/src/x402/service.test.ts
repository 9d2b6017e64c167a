/**
 * The x402 service against a real anvil node with TestUSDC, the local facilitator, and client
 * signatures made by the official x402 v2 client packages.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createViemChain } from "../chain/viem-chain.js";
import { GatewayError } from "../errors.js";
import { closedPortUrl, mintUsdc } from "@tollgate/testing";
import { noopTelemetry } from "../observability/telemetry.js";
import { decodeHeader, encodeHeader } from "./codec.js";
import type { X402Service } from "./service.js";
import { FUNDS, makeService, officialPaymentHeader, offsetClock, patchOffer, startX402Env, type X402Env } from "./test-fixtures.js";

const PRICE = 2_500n;
const input = { amount: PRICE, resourceUrl: "https://gw.test/v1/images/generations", description: "One image", mimeType: "application/json" };
let env: X402Env;
let requestNo = 0;
const req = () => `req_${++requestNo}`;

beforeAll(async () => {
  env = await startX402Env();
});
afterAll(async () => {
  await env?.stop();
});

/** A fresh service (own store and clock) and a helper that signs its challenge like a client. */
function setup(opts: Parameters<typeof makeService>[1] = {}) {
  const clock = offsetClock();
  const made = makeService(env, { clock, ...opts });
  const challenge = async () => (await made.service.challenge({ ...input, error: "payment required" })).body;
  return { ...made, clock, challenge, sign: async (patch?: Record<string, unknown>, key = env.payer.privateKey) => officialPaymentHeader(patch ? patchOffer(await challenge(), patch) : await challenge(), key) };
}

async function expectRefused(service: X402Service, header: string, reason: string, amount = input.amount) {
  const before = await env.balances();
  const r = await service.verify({ ...input, amount, header, requestId: req() });
  expect(r).toMatchObject({ ok: false, reason });
  expect(await env.balances()).toEqual(before);
  return r;
}

describe("x402 service on anvil (local facilitator)", () => {
  it("offers one exact requirement per network with the token's EIP-712 domain; the challenge header is the body", async () => {
    const { service, challenge, describe: lines } = setup();
    const offers = await service.offers(input);
    expect(offers).toEqual([
      { scheme: "exact", network: `eip155:${env.node.chainId}`, amount: "2500", asset: env.usdc, payTo: env.payTo, maxTimeoutSeconds: 300, extra: { name: "USD Coin", version: "2" } },
    ]);
    const { body, header } = await service.challenge({ ...input, error: "payment required" });
    expect(body).toEqual({ x402Version: 2, error: "payment required", resource: { url: input.resourceUrl, description: "One image", mimeType: "application/json" }, accepts: offers });
    expect(decodeHeader(header)).toEqual({ ok: true, value: body });
    expect(await challenge()).toEqual(body);
    expect(lines()).toEqual([expect.stringMatching(/^x402: on \(payTo 0x[0-9a-f]{40}; eip155:31337 via local facilitator 0x[0-9a-f]{40}; maxTimeoutSeconds 300\)$/)]);
  });

  it("a payment signed by the official client verifies, settles exactly the price on-chain, and cannot be replayed", async () => {
    const { service, store, sign } = setup();
    const header = await sign();
    const before = await env.balances();
    const requestId = req();
    const v = await service.verify({ ...input, header, requestId });
    if (!v.ok) throw new Error(`refused: ${v.reason} ${v.message}`);
    expect(v.payment).toMatchObject({ requestId, network: "eip155:31337", chainId: 31337, payer: env.payer.address, amount: PRICE });
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "claimed", requestId });
    expect(await env.balances()).toEqual(before); // verified, nothing moved yet

    const { header: responseHeader, response } = await service.settle(v.payment);
    expect(response).toEqual({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network: "eip155:31337", payer: env.payer.address });
    expect(decodePaymentResponseHeader(responseHeader)).toEqual(response);
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    expect(await env.chain.authorizationUsed(env.payer.address, v.payment.nonce)).toBe(true);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "settled", txHash: response.transaction });

    // The same signature again: refused (nonce used on-chain), and no money moves.
    const again = await expectRefused(service, header, "nonce_used");
    expect(again.ok ? "" : again.message).toMatch(/already used on-chain/);
    // Even through a fresh store (another gateway instance), the chain refuses it.
    await expectRefused(setup().service, header, "nonce_used");
    // Settling it again: the facilitator refuses the used nonce, and the chain shows the first transfer (no second one).
    expect((await service.settle(v.payment)).response.transaction).toBe(response.transaction);
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
  });

  it("refuses expired, underpaying, wrong-payee, wrong-asset, wrong-chain, too-long and badly signed payments, moving nothing", async () => {
    const { service, sign, clock } = setup();
    const valid = await sign();

    clock.offsetMs = 400_000; // past validBefore (now + 300 s)
    await expectRefused(service, valid, "expired");
    // Still valid for 100 s: too short for the wait for the upstream (twice its 60 s timeout) and the
    // settlement after it (a client signing a short window would get the work done and let the
    // payment lapse before it is collected).
    clock.offsetMs = 200_000;
    const short = await expectRefused(service, valid, "expired");
    expect(short.ok ? "" : short.message).toContain("expires within 150 s");
    clock.offsetMs = -120_000; // before the client's clock: validBefore beyond now + maxTimeoutSeconds + slack
    await expectRefused(service, valid, "validity_too_long");
    clock.offsetMs = 0;

    await expectRefused(service, await sign({ amount: (PRICE - 1n).toString() }), "underpaid");
    await expectRefused(service, await sign({ payTo: env.facilitator.address }), "wrong_payee");
    await expectRefused(service, await sign({ asset: "0x000000000000000000000000000000000000dead" }), "wrong_asset");
    await expectRefused(service, await sign({ network: "eip155:1" }), "wrong_network");
    await expectRefused(service, await sign({ maxTimeoutSeconds: 3_600 }), "validity_too_long");

    // Tampered after signing: a larger value, or another key signing for the payer.
    const decoded = decodeHeader(valid);
    if (!decoded.ok) throw new Error(decoded.message);
    const tampered = structuredClone(decoded.value) as { payload: { authorization: { value: string; from: string } } };
    tampered.payload.authorization.value = (PRICE * 10n).toString();
    await expectRefused(service, encodeHeader(tampered), "bad_signature");
    const impostor = await sign(undefined, env.node.accounts[5]!.privateKey);
    const forged = decodeHeader(impostor);
    if (!forged.ok) throw new Error(forged.message);
    (forged.value as typeof tampered).payload.authorization.from = env.payer.address;
    await expectRefused(service, encodeHeader(forged.value), "bad_signature");

    // A real signature from an account without funds.
    await expectRefused(service, impostor, "insufficient_balance");

    // The untouched signature still works afterwards: none of the refusals claimed its nonce.
    const v = await service.verify({ ...input, header: valid, requestId: req() });
    expect(v.ok).toBe(true);
    if (v.ok) await service.release(v.payment);
  });

  it("release after an upstream failure frees the nonce: the same signature can pay once, later", async () => {
    const { service, store, sign } = setup();
    const header = await sign();
    const before = await env.balances();
    const first = await service.verify({ ...input, header, requestId: req() });
    if (!first.ok) throw new Error(first.message);
    // While claimed, a replay loses.
    await expectRefused(service, header, "nonce_used");
    await service.release(first.payment); // upstream failed: nothing charged
    expect(await store.getPaymentNonce(first.payment)).toBeNull();
    expect(await env.balances()).toEqual(before);

    const retry = await service.verify({ ...input, header, requestId: req() });
    if (!retry.ok) throw new Error(retry.message);
    await service.settle(retry.payment);
    await service.release(retry.payment); // a no-op once settled
    expect(await store.getPaymentNonce(retry.payment)).toMatchObject({ status: "settled" });
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
  });

  it("authorizations signed against one balance: while one is being served, another is accepted only if both fit the balance", async () => {
    const { service, store } = setup();
    const { payer: balance } = await env.balances();
    const part = (balance * 6n) / 10n;
    const signed = async () => {
      const { body } = await service.challenge({ ...input, amount: part, error: "payment required" });
      return officialPaymentHeader(body, env.payer.privateKey);
    };
    const [first, second, small] = [await signed(), await signed(), await (async () => officialPaymentHeader((await service.challenge({ ...input, amount: balance - part, error: "x" })).body, env.payer.privateKey))()];
    const a = await service.verify({ ...input, amount: part, header: first, requestId: req() });
    expect(a.ok).toBe(true);
    // Each alone is covered by the balance (the facilitator accepts it); both together are not.
    const b = await expectRefused(service, second, "insufficient_balance", part);
    expect((b as { message: string }).message).toContain("other payments in flight");
    // What is left of the balance still buys a call.
    const c = await service.verify({ ...input, amount: balance - part, header: small, requestId: req() });
    expect(c.ok).toBe(true);
    // Once the first is released (its upstream failed), the second fits beside the third.
    if (!a.ok || !c.ok) throw new Error("unreachable");
    await service.release(a.payment);
    const again = await service.verify({ ...input, amount: part, header: second, requestId: req() });
    expect(again.ok).toBe(true);
    if (again.ok) await service.release(again.payment);
    await service.release(c.payment);
    expect(await store.getPaymentNonce({ network: `eip155:${env.node.chainId}`, payer: env.payer.address, nonce: a.payment.nonce })).toBeNull();
  });

  it("10 concurrent verifies of one signature: exactly one is accepted", async () => {
    const { service, sign } = setup();
    const header = await sign();
    const results = await Promise.all(Array.from({ length: 10 }, () => service.verify({ ...input, header, requestId: req() })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "nonce_used")).toHaveLength(9);
    const winner = results.find((r) => r.ok);
    if (winner?.ok) await service.release(winner.payment);
  });

  it("a failed settlement throws upstream_error and keeps the nonce claimed (no second result for one signature)", async () => {
    const { service, store, sign } = setup();
    const spender = env.node.accounts[6]!;
    await mintUsdc(env.node, env.usdc, spender.address, PRICE);
    const header = await sign(undefined, spender.privateKey);
    const v = await service.verify({ ...input, header, requestId: req() });
    if (!v.ok) throw new Error(v.message);
    // The payer moves its funds away between verify and settle.
    await createViemChain({ rpcUrl: env.node.rpcUrl, chainId: env.node.chainId, usdc: env.usdc, privateKey: spender.privateKey, pollingIntervalMs: 50 }).transfer(env.payer.address, PRICE);
    const error = await service.settle(v.payment).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: "upstream_error", status: 502 });
    expect((error as Error).message).toMatch(/insufficient_balance/);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "claimed" });
    await expectRefused(service, header, "insufficient_balance");
    // Funded again, the signature would settle on-chain, but the kept claim refuses it here.
    await mintUsdc(env.node, env.usdc, spender.address, PRICE);
    await expectRefused(service, header, "nonce_used");
  });

  it("reports each verification to its telemetry: valid, the refusal reason, or error when it threw", async () => {
    const results: string[] = [];
    const telemetry = { ...noopTelemetry, x402Verified: (result: string) => void results.push(result) };
    const { service, sign } = setup({ telemetry });
    const header = await sign();
    expect((await service.verify({ ...input, header, requestId: req() })).ok).toBe(true);
    await expectRefused(service, header, "nonce_used");
    await expectRefused(service, "not-an-x402-payload", "malformed");
    // A chain that cannot be reached: the verification throws (the route answers 502).
    const unreachable = makeService({ ...env, node: { ...env.node, rpcUrl: await closedPortUrl() } }, { telemetry });
    await expect(unreachable.service.verify({ ...input, header: await sign(), requestId: req() })).rejects.toThrow();
    expect(results).toEqual(["valid", "nonce_used", "malformed", "error"]);
  });
});

describe("x402 end to end with @x402/fetch", () => {
  let server: Server;
  let url: string;
  let calls = 0;

  beforeAll(async () => {
    const { service } = makeService(env);
    // A minimal paid resource: the route logic the media routes follow (challenge → verify → upstream → settle).
    server = createServer((request, response) => {
      void (async () => {
        const header = request.headers["payment-signature"];
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          response.writeHead(status, { "content-type": "application/json", ...headers });
          response.end(JSON.stringify(body));
        };
        const resource = { ...input, resourceUrl: url };
        if (typeof header !== "string") {
          const c = await service.challenge({ ...resource, error: "PAYMENT-SIGNATURE header is required" });
          return send(402, c.body, { "PAYMENT-REQUIRED": c.header });
        }
        const v = await service.verify({ ...resource, header, requestId: req() });
        if (!v.ok) {
          const c = await service.challenge({ ...resource, error: v.message });
          return send(402, c.body, { "PAYMENT-REQUIRED": c.header });
        }
        calls++; // the upstream call
        const settled = await service.settle(v.payment);
        send(200, { data: [{ b64_json: "AAAA" }] }, { "PAYMENT-RESPONSE": settled.header, "access-control-expose-headers": "PAYMENT-RESPONSE" });
      })().catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/images/generations`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("wrapFetchWithPayment pays the 402 challenge and receives the PAYMENT-RESPONSE", async () => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
    client.setSpendControls({ allowedAssets: true });
    const fetchWithPayment = wrapFetchWithPayment(fetch, client);
    const before = await env.balances();
    const response = await fetchWithPayment(url, { method: "POST", body: "{}" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: [{ b64_json: "AAAA" }] });
    const settled = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
    expect(settled).toMatchObject({ success: true, network: "eip155:31337", payer: env.payer.address, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(calls).toBe(1);
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    expect(before.payer).toBeLessThanOrEqual(FUNDS);
  });
});
