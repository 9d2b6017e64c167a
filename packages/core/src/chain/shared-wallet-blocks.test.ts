/**
 * Several Chain instances (gateway processes) sharing one wallet on a chain that mines every
 * two seconds, not at once: a send refused because another instance's transaction holds its nonce
 * waits for that nonce's block, sees another call there, and is signed again. Every write lands,
 * once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { deployTestUsdc, mintUsdc, startAnvil, type AnvilNode } from "@tollgate/testing";
import { createViemChain, type Address } from "./index.js";

let node: AnvilNode;
let usdc: Address;
beforeAll(async () => {
  node = await startAnvil({ blockTime: 2 });
  usdc = await deployTestUsdc(node);
}, 60_000);
afterAll(() => node?.stop());

it("three instances sharing one wallet on 2 s blocks land all six transfers, each once", async () => {
  const key = node.accounts[8]!;
  const senders = [0, 1, 2].map(() =>
    createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc, privateKey: key.privateKey, pollingIntervalMs: 200 }),
  );
  await mintUsdc(node, usdc, key.address, 1_000n);
  const to = node.accounts[7]!.address;
  const before = await senders[0]!.balanceOf(to);
  const hashes = await Promise.all(Array.from({ length: 6 }, (_, i) => senders[i % 3]!.transfer(to, BigInt(i + 1))));
  expect(new Set(hashes).size).toBe(6);
  expect((await senders[0]!.balanceOf(to)) - before).toBe(21n);
}, 120_000);
