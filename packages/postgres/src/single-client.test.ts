/**
 * A store on one shared connection (a `pg.Client`, not a pool): the transaction of an x402 claim
 * with `maxOpen` runs alone on it, so a statement of another operation that fails meanwhile cannot
 * roll the claim back while the claim reports success.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const [server] = testDatabases("single-client", ["server"]);
const clients: pg.Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end()));
});

if (server) {
  describe("PostgreSQL store on one pg.Client", () => {
    it("concurrent claims with maxOpen, one of them failing: each other claim that reports success is stored", async () => {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      clients.push(client);
      await client.connect();
      const store = await createPostgresStore({ pool: client, schema: server.schema() });
      const claim = (i: number, amount: bigint) =>
        store.claimPaymentNonce({
          network: "eip155:8453",
          payer: "0x00000000000000000000000000000000000000aa",
          nonce: `0x${String(i).padStart(64, "0")}`,
          requestId: `req_${i}`,
          now: 1,
          expiresAt: 1_000,
          amount,
          maxOpen: 10n ** 90n,
        });
      // The second overflows numeric(78, 0): its statement fails inside its own transaction.
      const results = await Promise.allSettled([
        claim(1, 5n),
        claim(2, 10n ** 80n),
        claim(3, 7n),
        store.getPaymentNonce({ network: "eip155:8453", payer: "0x00000000000000000000000000000000000000aa", nonce: `0x${"1".padStart(64, "0")}` }),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
      expect([(results[0] as PromiseFulfilledResult<boolean>).value, (results[2] as PromiseFulfilledResult<boolean>).value]).toEqual([true, true]);
      for (const i of [1, 3])
        expect(
          await store.getPaymentNonce({
            network: "eip155:8453",
            payer: "0x00000000000000000000000000000000000000aa",
            nonce: `0x${String(i).padStart(64, "0")}`,
          }),
        ).toMatchObject({ status: "claimed", requestId: `req_${i}` });
      await store.close();
    });
  });
} else {
  serverMissing("single pg.Client transactions");
}
