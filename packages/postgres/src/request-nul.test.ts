/**
 * U+0000 in an intent's request. PostgreSQL refuses to read any member of a `json` value holding
 * `\u0000`, and the charge trigger reads the request's model: the store keeps U+0000 out of the
 * stored request (as U+FFFD), so such an intent settles with its charge, in a group with others;
 * the HTTP prepare refuses it in its text fields with a 400.
 */
import { makeIntent, makeKey, withGateway } from "@tollgate/testing";
import { describe, expect, it } from "vitest";
import { requestJson } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 0, 1); // makeKey's and makeIntent's
const OWNER = "0x00000000000000000000000000000000000000aa"; // makeKey's
let n = 0;
const charge = (intentId: string, keyId: string) => ({
  chargeId: `ch_nul${++n}`,
  intentId,
  keyId,
  owner: OWNER,
  chainId: 8453,
  amount: 5n,
  status: "queued" as const,
  createdAt: T0 + 1,
});
const intent = (keyId: string, resource: string) =>
  makeIntent(keyId, 10n, { request: { service: "s", action: "a", resource, method: "GET", modelId: "gpt-4o-mini" } });

describe("requestJson", () => {
  it("writes U+0000 as U+FFFD and leaves an escaped backslash before u0000 alone", () => {
    expect(JSON.parse(requestJson({ a: "x\u0000y", b: "\\u0000", c: "\\\u0000" }))).toEqual({ a: "x\ufffdy", b: "\\u0000", c: "\\\ufffd" });
    expect(requestJson({ a: "plain" })).toBe('{"a":"plain"}');
    expect(requestJson(undefined)).toBe("null");
  });
});

for (const { db, schema, name } of testDatabases("requestnul")) {
  describe(`U+0000 in an intent's request (${name})`, () => {
    it("an intent whose request holds U+0000 settles with its charge, grouped with another", async () => {
      const store = await createPostgresStore({ pool: db, schema: schema() });
      const k = makeKey();
      await store.insertKey(k);
      const bad = await store.reserve({ intent: intent(k.keyId, "r\u0000"), now: T0 });
      const good = await store.reserve({ intent: intent(k.keyId, "r"), now: T0 });
      if (!bad.ok || !good.ok) throw new Error("reserve failed");
      const [b, g] = await Promise.all([
        store.settle({ intentId: bad.intent.intentId, finalAmount: 5n, result: {}, now: T0 + 1, charge: charge(bad.intent.intentId, k.keyId) }),
        store.settle({ intentId: good.intent.intentId, finalAmount: 5n, result: {}, now: T0 + 1, charge: charge(good.intent.intentId, k.keyId) }),
      ]);
      expect([b.ok, g.ok]).toEqual([true, true]);
      expect((await store.getIntent(bad.intent.intentId))?.request).toMatchObject({ resource: "r\ufffd" });
      expect(await store.pendingChargeTotals(OWNER, 8453)).toEqual({ amount: 10n, count: 2 });
      await store.close();
    });
  });
}

for (const { db, schema } of testDatabases("requestnulhttp", ["server"])) {
  it("HTTP: a prepare whose text fields hold U+0000 is a 400 naming the field", async () => {
    await withGateway({ createStore: () => createPostgresStore({ pool: db, schema: schema() }) }, async (h) => {
      const k = await h.createKey();
      const prep = await h.prepare(k.token, {
        service: "inference",
        action: "chat",
        resource: "https://api.example.com/v1\u0000",
        method: "POST",
        maxAmountWei: "300",
      });
      expect(prep.status).toBe(400);
      expect(prep.body.error).toMatchObject({ code: "invalid_request", param: "resource" });
    });
  });
}
