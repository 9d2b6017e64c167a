/**
 * The HTTP facilitator client against a local stub facilitator server (node:http) that implements
 * `/verify`, `/settle` and `/supported` by delegating to the local facilitator on anvil.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { mintUsdc } from "@tollgate/testing";
import { decodeHeader } from "./codec.js";
import { signTransferAuthorization } from "../chain/eip3009.js";
import type { Address, Chain, Hex } from "../chain/types.js";
import { createViemChain } from "../chain/viem-chain.js";
import { createFetchHttpClient } from "../http/client.js";
import { noopTelemetry, type Telemetry } from "../observability/telemetry.js";
import { createHttpFacilitator } from "./http-facilitator.js";
import { createLocalFacilitator } from "./local-facilitator.js";
import { makeService, officialPaymentHeader, startX402Env, type X402Env } from "./test-fixtures.js";
import { INVALID, paymentPayloadSchema, paymentRequirementsSchema } from "./types.js";

const PRICE = 1_234n;
const input = { amount: PRICE, resourceUrl: "https://gw.test/v1/embeddings", description: "embeddings", mimeType: "application/json" };
let env: X402Env;
let server: Server;
let base: string;
/**
 * How the stub answers: delegate, fail with 500, stall for 2 s, settle on-chain and then stall 2 s
 * before answering, or settle blind (submit the transfer without checking it first, as a remote
 * facilitator may, and answer transaction_failed when it reverts), or answer 500 at once and
 * settle on-chain 1.5 s later, or settle and answer `settlement_pending` with the hash as @x402/evm
 * does when its receipt wait fails, or refuse for lack of funds without sending anything.
 */
let mode: "ok" | "fail" | "slow" | "late" | "blind" | "later" | "pending" | "refused" = "ok";
let chain: Chain;
const seen: { path: string; body: unknown; apiKey: unknown }[] = [];
let n = 0;

beforeAll(async () => {
  env = await startX402Env();
  chain = createViemChain({
    rpcUrl: env.node.rpcUrl,
    chainId: env.node.chainId,
    usdc: env.usdc,
    privateKey: env.facilitator.privateKey,
    pollingIntervalMs: 50,
  });
  const local = createLocalFacilitator({ chains: [chain], clock: { now: () => Date.now() } });
  server = createServer((request, response) => {
    let text = "";
    request.on("data", (c: Buffer) => (text += c.toString()));
    request.on("end", () => {
      void (async () => {
        const body: unknown = text ? JSON.parse(text) : undefined;
        seen.push({ path: `${request.method} ${request.url}`, body, apiKey: request.headers["x-api-key"] });
        const reply = (status: number, value: unknown) => {
          response.writeHead(status, { "content-type": "application/json" });
          response.end(JSON.stringify(value));
        };
        if (mode === "fail") return void response.writeHead(500, { "content-type": "text/plain" }).end("facilitator exploded");
        if (mode === "slow") await new Promise((resolve) => setTimeout(resolve, 2_000));
        if (request.method === "GET" && request.url === "/supported") return reply(200, await local.supported());
        const { paymentPayload, paymentRequirements } = body as { paymentPayload: unknown; paymentRequirements: unknown };
        const payload = paymentPayloadSchema.parse(paymentPayload);
        const requirements = paymentRequirementsSchema.parse(paymentRequirements);
        if (request.url === "/verify") {
          const v = await local.verify(payload, requirements);
          return reply(v.isValid ? 200 : 400, v); // like real facilitators: a refusal may come with a 4xx
        }
        if (request.url === "/settle" && mode === "later") {
          setTimeout(() => void local.settle(payload, requirements), 1_500);
          return void response.writeHead(500, { "content-type": "text/plain" }).end("facilitator lost track");
        }
        if (request.url === "/settle" && mode === "blind") {
          const { authorization, signature } = payload.payload as { authorization: Record<string, string>; signature: `0x${string}` };
          const auth = {
            from: authorization.from as Address,
            to: authorization.to as Address,
            value: BigInt(authorization.value!),
            validAfter: BigInt(authorization.validAfter!),
            validBefore: BigInt(authorization.validBefore!),
            nonce: authorization.nonce as Hex,
          };
          const failed = { success: false, errorReason: INVALID.transactionFailed, transaction: "", network: requirements.network };
          return reply(
            200,
            await chain.transferWithAuthorization(auth, signature).then(
              (transaction) => ({ success: true, transaction, network: requirements.network }),
              () => failed,
            ),
          );
        }
        if (request.url === "/settle" && mode === "pending") {
          const { transaction } = await local.settle(payload, requirements);
          return reply(200, {
            success: false,
            errorReason: "settlement_pending",
            errorMessage: "Timed out while waiting for the receipt",
            transaction,
            network: requirements.network,
          });
        }
        if (request.url === "/settle" && mode === "refused")
          return reply(200, { success: false, errorReason: INVALID.balance, transaction: "", network: requirements.network });
        if (request.url === "/settle") {
          const settled = await local.settle(payload, requirements);
          if (mode === "late") await new Promise((resolve) => setTimeout(resolve, 2_000));
          return reply(200, settled);
        }
        reply(404, { error: "not found" });
      })().catch((error: unknown) => response.writeHead(500).end(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await env?.stop();
});

function setup(telemetry?: Partial<Telemetry>) {
  const made = makeService(env, {
    facilitator: { type: "http", url: `${base}/`, headers: { "x-api-key": "k" }, timeoutMs: 500 },
    settleCheckSeconds: 1,
    ...(telemetry ? { telemetry: Object.assign({}, noopTelemetry, telemetry) } : {}),
  });
  const sign = async () => officialPaymentHeader((await made.service.challenge({ ...input, error: "pay" })).body, env.payer.privateKey);
  return { ...made, sign };
}

/** A service over the stub facilitator, and a payment it verified (the nonce claimed). */
async function verified(telemetry?: Partial<Telemetry>) {
  const made = setup(telemetry);
  const header = await made.sign();
  const v = await made.service.verify({ ...input, header, requestId: `req_h${++n}` });
  if (!v.ok) throw new Error(v.message);
  return Object.assign(made, { v, header });
}

describe("x402 through an HTTP facilitator", () => {
  it("verifies and settles through POST /verify and /settle; the wire body is {x402Version:2, paymentPayload, paymentRequirements}", async () => {
    mode = "ok";
    seen.length = 0;
    const { service, sign, describe: lines } = setup();
    expect(lines()[0]).toContain(`via facilitator 127.0.0.1:`);
    const header = await sign();
    const before = await env.balances();
    const v = await service.verify({ ...input, header, requestId: `req_h${++n}` });
    if (!v.ok) throw new Error(`${v.reason}: ${v.message}`);
    const settled = await service.settle(v.payment);
    expect(decodePaymentResponseHeader(settled.header)).toEqual({
      success: true,
      transaction: settled.response.transaction,
      network: "eip155:31337",
      payer: env.payer.address,
    });
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    expect(seen.map((s) => [s.path, s.apiKey])).toEqual([
      ["POST /verify", "k"],
      ["POST /settle", "k"],
    ]);
    expect(seen[0]?.body).toEqual({ x402Version: 2, paymentPayload: v.payment.payload, paymentRequirements: v.payment.requirements });

    // The replay is refused by the facilitator (4xx with an isValid:false body → a refusal value).
    const again = await service.verify({ ...input, header, requestId: `req_h${++n}` });
    expect(again).toMatchObject({ ok: false, reason: "nonce_used" });
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
  });

  it("GET /supported lists the exact kind and the signer", async () => {
    mode = "ok";
    const f = createHttpFacilitator({ url: base, http: createFetchHttpClient() });
    expect(await f.supported()).toEqual({
      kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:31337" }],
      extensions: [],
      signers: { "eip155:*": [env.facilitator.address] },
    });
  });

  it("a facilitator answering 500 is a 502; nothing is claimed", async () => {
    const { service, store, sign } = setup();
    const header = await sign();
    mode = "fail";
    const error = await service.verify({ ...input, header, requestId: `req_h${++n}` }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_error", status: 502 });
    expect((error as Error).message).toMatch(/facilitator at 127\.0\.0\.1:\d+ \(\/verify\) answered 500/);
    // Back up: the same signature verifies (the failed attempt claimed nothing), but settlement fails with 502.
    mode = "ok";
    const v = await service.verify({ ...input, header, requestId: `req_h${++n}` });
    if (!v.ok) throw new Error(v.message);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "claimed" });
    mode = "fail";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", status: 502 });
    mode = "ok";
    await service.release(v.payment);
  });

  it("a settle answer lost after the transfer landed: the chain shows the transfer, so the payment stands and the call is served", async () => {
    const { service, store, v } = await verified();
    const before = await env.balances();
    mode = "late";
    const settled = await service.settle(v.payment);
    mode = "ok";
    expect(settled.response).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: env.payer.address });
    expect(decodePaymentResponseHeader(settled.header).transaction).toBe(settled.response.transaction);
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "settled", txHash: settled.response.transaction });
  });

  it("a settle that moved nothing is still a 502 after the chain check, and the signature can be presented again", async () => {
    const { service, v, header } = await verified();
    const before = await env.balances();
    mode = "fail";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", status: 502 });
    mode = "ok";
    expect(await env.balances()).toEqual(before);
    await service.release(v.payment);
    const again = await service.verify({ ...input, header, requestId: `req_h${++n}` });
    expect(again.ok).toBe(true);
  });

  it("a payer that burns its own nonce on a transfer to itself is not paid for: the chain check wants the signed transfer", async () => {
    const { service, store, v } = await verified();
    // While the upstream call runs, the payer spends the same nonce itself: 0 USDC to itself, gas only.
    const own = createViemChain({
      rpcUrl: env.node.rpcUrl,
      chainId: env.node.chainId,
      usdc: env.usdc,
      privateKey: env.payer.privateKey,
      pollingIntervalMs: 50,
    });
    const self = { from: env.payer.address, to: env.payer.address, value: 0n, validAfter: 0n, validBefore: 2n ** 40n, nonce: v.payment.nonce };
    await own.transferWithAuthorization(self, await signTransferAuthorization(privateKeyToAccount(env.payer.privateKey), await own.tokenDomain(), self));
    const before = await env.balances();
    mode = "blind";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", status: 502 });
    mode = "ok";
    expect(await env.balances()).toEqual(before);
    // Watched (the facilitator's transaction failed: unsure), but the nonce's transfer to itself is not the payment.
    expect(await service.checkLateTransfers()).toBe(0);
    const listed = async () => (await store.listUnsurePaymentNonces({ now: Date.now(), limit: 100 })).some((u) => u.nonce === v.payment.nonce);
    expect(await listed()).toBe(true);
    // Its nonce is used without its transfer at a second check too: it can never land, and is no longer looked for.
    expect(await service.checkLateTransfers()).toBe(0);
    expect(await listed()).toBe(false);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "claimed" });
  });

  it("a transfer that lands after its call was answered 502 is recorded on the claim, counted and reported for a refund", async () => {
    const late: string[] = [];
    const { service, store, v } = await verified({ x402LateTransfer: (network) => void late.push(network) });
    const before = await env.balances();
    mode = "later";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", status: 502, details: { settlementUnsure: true } });
    mode = "ok";
    // Watched from the store until the authorization is void (and a minute).
    const claim = await store.getPaymentNonce(v.payment);
    expect(claim).toMatchObject({ status: "claimed", checkUntil: Number(v.payment.validBefore) * 1000 + 60_000 });
    expect(await service.checkLateTransfers()).toBe(0);
    // The stub sends the transfer 1.5 s after its answer: a later check finds it and records its hash.
    let recorded = 0;
    for (let i = 0; i < 100 && recorded === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recorded = await service.checkLateTransfers();
    }
    expect(recorded).toBe(1);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "settled", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    // Reported once: the claim is no longer unsure.
    expect(await service.checkLateTransfers()).toBe(0);
    expect(late).toEqual(["eip155:31337"]);
  });

  it("a late transfer is found behind 250 unsure claims due before it: a check pages through them all", async () => {
    const { service, store, v } = await verified();
    const now = Date.now();
    for (let i = 0; i < 250; i++) {
      const claim = {
        network: v.payment.network,
        payer: env.payer.address,
        nonce: `0x${(0xdead0000 + i).toString(16).padStart(64, "0")}`,
        requestId: `req_dead_${i}`,
      };
      expect(await store.claimPaymentNonce(Object.assign({ now, expiresAt: now + 60_000, amount: PRICE }, claim))).toBe(true);
      expect(await store.markPaymentNonceUnsure(Object.assign({ payTo: env.payTo, checkUntil: now + 30_000 + i }, claim))).toBe(true);
    }
    mode = "later";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", details: { settlementUnsure: true } });
    mode = "ok";
    let recorded = 0;
    for (let i = 0; i < 50 && recorded === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recorded = await service.checkLateTransfers();
    }
    expect(recorded).toBe(1);
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "settled" });
  });

  it("a settle answered settlement_pending with a transaction that landed is a success with that transaction, not a 502", async () => {
    const { service, store, v } = await verified();
    const before = await env.balances();
    mode = "pending";
    const settled = await service.settle(v.payment);
    mode = "ok";
    expect(settled.response).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await env.balances()).toEqual({ payer: before.payer - PRICE, payTo: before.payTo + PRICE });
    expect(await store.getPaymentNonce(v.payment)).toMatchObject({ status: "settled", txHash: settled.response.transaction });
  });

  it("a settle refused before sending (insufficient balance, no transaction) is a sure 502 and is not watched", async () => {
    const { service, store, v } = await verified();
    mode = "refused";
    await expect(service.settle(v.payment)).rejects.toMatchObject({ code: "upstream_error", details: { settlementUnsure: false } });
    mode = "ok";
    expect((await store.getPaymentNonce(v.payment))?.checkUntil).toBeUndefined();
  });

  it("two authorizations racing one balance: the loser's transfer reverts in simulation, a refusal rather than a transaction that may land", async () => {
    const key = generatePrivateKey();
    await mintUsdc(env.node, env.usdc, privateKeyToAccount(key).address, PRICE);
    const { service } = setup();
    const challenge = (await service.challenge({ ...input, error: "pay" })).body;
    const requirements = challenge.accepts[0]!;
    const signed = async () => paymentPayloadSchema.parse((decodeHeader(await officialPaymentHeader(challenge, key)) as { value: unknown }).value);
    const [first, second] = [await signed(), await signed()];
    const local = createLocalFacilitator({ chains: [chain], clock: { now: () => Date.now() } });
    // Both check out against the balance; the transfers then run one after the other.
    const results = await Promise.all([local.settle(first, requirements), local.settle(second, requirements)]);
    expect(results.filter((r) => r.success)).toHaveLength(1);
    expect(results.find((r) => !r.success)).toMatchObject({ errorReason: INVALID.simulationFailed });
  });

  it("a facilitator slower than timeoutMs is a 504", async () => {
    const { service, sign } = setup();
    const header = await sign();
    mode = "slow";
    // The slow facilitator would answer (200) after 2 s: a 504 can only be the deadline's.
    const error = await service.verify({ ...input, header, requestId: `req_h${++n}` }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_timeout", status: 504 });
    expect((error as Error).message).toMatch(/did not answer within 500 ms/);
    mode = "ok";
  });
});
