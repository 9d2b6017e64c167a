/**
 * x402 on the SQLite store, whose amounts stop at 2^63 - 1: a payer on a dev chain may hold more
 * TestUSDC than that and sign an authorization for more. Real anvil, TestUSDC, the local
 * facilitator and the official x402 client's signatures (core's x402 test fixtures).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mintUsdc } from "@tollgate/testing";
import { createSqliteStore } from "@tollgate/sqlite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeService, officialPaymentHeader, patchOffer, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";

const PRICE = 2_500n;
const MAX_INT64 = (1n << 63n) - 1n;
const input = { amount: PRICE, resourceUrl: "https://gw.test/v1/embeddings", description: "Embeddings", mimeType: "application/json" };
let env: X402Env;

beforeAll(async () => {
  env = await startX402Env();
  await mintUsdc(env.node, env.usdc, env.payer.address, 1n << 65n);
});
afterAll(async () => {
  await env?.stop();
});

it("an authorization above the store's largest amount is refused as invalid_payment (not a 500); one at that amount is claimed; one above the price is refused", async () => {
  const store = createSqliteStore({ filename: join(mkdtempSync(join(tmpdir(), "tollgate-x402-sqlite-")), "gw.db") });
  const { service } = makeService(env, { store });
  // A call priced at `amount`, and an authorization signed for that price.
  const signed = async (amount: bigint) =>
    officialPaymentHeader((await service.challenge({ ...input, amount, error: "payment required" })).body, env.payer.privateKey);
  const before = await env.balances();

  const over = await service.verify({ ...input, amount: MAX_INT64 + 1n, header: await signed(MAX_INT64 + 1n), requestId: "req_over" });
  expect(over).toMatchObject({ ok: false, reason: "invalid_payment", message: expect.stringContaining(`above the most this gateway records (${MAX_INT64})`) });

  const atMax = await service.verify({ ...input, amount: MAX_INT64, header: await signed(MAX_INT64), requestId: "req_max" });
  expect(atMax).toMatchObject({ ok: true, payment: { amount: MAX_INT64 } });
  // A second one fits the payer's balance (2^65 + funds) beside the first: their sum passes 2^63 - 1 and is still exact.
  const second = await service.verify({ ...input, amount: MAX_INT64, header: await signed(MAX_INT64), requestId: "req_max_2" });
  expect(second.ok).toBe(true);
  for (const v of [atMax, second]) if (v.ok) await service.release(v.payment);
  // `exact` moves what is signed: an authorization for more than the price would pay more than the receipt says.
  const above = officialPaymentHeader(
    patchOffer((await service.challenge({ ...input, error: "payment required" })).body, { amount: (PRICE + 1n).toString() }),
    env.payer.privateKey,
  );
  expect(await service.verify({ ...input, header: await above, requestId: "req_above" })).toMatchObject({
    ok: false,
    reason: "invalid_payment",
    message: expect.stringContaining(`this call costs exactly ${PRICE}`),
  });
  expect(await env.balances()).toEqual(before);
  await store.close();
});
