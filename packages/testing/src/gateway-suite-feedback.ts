/**
 * The feedback route suite: submissions in both spellings, validation, reviewer resolution in its
 * three modes, lists and summaries, through `gateway.fetch` on a real store. A store's test file
 * runs it in one line: `runFeedbackRouteSuite("sqlite", { createStore })`.
 */
import { describe, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import type { GatewayOptions, GatewayOptionsError } from "@tollgate/core";
import { asWallet, bearer, CHAIN, expectError, OWNER, UNKNOWN_TOKEN, withGateway, type GatewaySuiteOptions, type Harness, type Reply } from "./gateway-suite-fixtures.js";

const WALLET = "0x1234567890AbcdEF1234567890aBcdef12345678";
const WALLET_LOWER = WALLET.toLowerCase();
const MODEL = { targetType: "model", targetId: "openai/gpt-4o" } as const;
const q = (params: Record<string, string | number>) => `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;

/** Registers the feedback route suite for the store `name` in the current vitest file. */
export function runFeedbackRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: Partial<GatewayOptions> = {}) => it(title, () => withGateway(options, fn, extra));
  const post = (h: Harness, body: unknown, headers: Record<string, string> = {}) => h.call("POST", "/v1/feedback", { body, headers });
  const list = async (h: Harness, params: Record<string, string | number> = MODEL): Promise<Reply> => h.call("GET", `/v1/feedback${q(params)}`);
  const summary = async (h: Harness, params: Record<string, string | number> = MODEL): Promise<Reply> => h.call("GET", `/v1/feedback/summary${q(params)}`);

  describe(`feedback routes: ${name}`, () => {
    describe("submit", () => {
      test("201 {feedbackId, target, verification, createdAt}; both spellings; listed with every field", async (h) => {
        const now = h.clock.now();
        const r = await post(h, { ...MODEL, rating: 5, comment: "  great latency  ", category: "latency", labels: ["eu", " fast ", "eu"] });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body).toEqual({
          feedbackId: expect.stringMatching(/^fb_/),
          target: { type: "model", id: "openai/gpt-4o" },
          verification: "anonymous",
          createdAt: now,
        });
        h.clock.advance(1000);
        const alias = await post(h, { target: { type: "model", id: "openai/gpt-4o" }, message: "works" });
        expect(alias.status, JSON.stringify(alias.body)).toBe(201);
        expect(alias.body.target).toEqual({ type: "model", id: "openai/gpt-4o" });
        // Both spellings at once are fine when they agree.
        expect((await post(h, { ...MODEL, target: { type: "model", id: "openai/gpt-4o" }, comment: "same", message: "same" })).status).toBe(201);
        const listed = await list(h);
        expect(listed.status).toBe(200);
        expect(listed.body.object).toBe("list");
        expect(listed.body.data.slice(1)).toEqual([
          {
            id: alias.body.feedbackId,
            target: { type: "model", id: "openai/gpt-4o" },
            category: "general",
            comment: "works",
            message: "works",
            labels: [],
            context: {},
            metadata: {},
            verification: "anonymous",
            createdAt: now + 1000,
          },
          {
            id: r.body.feedbackId,
            target: { type: "model", id: "openai/gpt-4o" },
            category: "latency",
            rating: 5,
            comment: "great latency",
            message: "great latency",
            labels: ["eu", "fast"],
            context: {},
            metadata: {},
            verification: "anonymous",
            createdAt: now,
          },
        ]);
      });

      test("400 naming the field for every bad input; nothing is stored", async (h) => {
        const cases: [unknown, string][] = [
          [{ targetId: "x", rating: 3 }, "targetType"],
          [{ targetType: "model", rating: 3 }, "targetId"],
          [{ rating: 3 }, "targetType"],
          [{ target: { type: "model" }, rating: 3 }, "targetId"],
          [{ targetType: "planet", targetId: "x", rating: 3 }, "targetType"],
          [{ targetType: "model", targetId: "   ", rating: 3 }, "targetId"],
          [{ targetType: "model", targetId: "x".repeat(513), rating: 3 }, "targetId"],
          [{ ...MODEL, rating: 0 }, "rating"],
          [{ ...MODEL, rating: 6 }, "rating"],
          [{ ...MODEL, rating: 2.5 }, "rating"],
          [{ ...MODEL, rating: "3" }, "rating"],
          [{ ...MODEL, comment: "x".repeat(5000) }, "comment"],
          [{ ...MODEL, message: "x".repeat(4001) }, "message"],
          [{ ...MODEL }, "comment"],
          [{ ...MODEL, comment: "   " }, "comment"],
          [{ ...MODEL, rating: null, comment: null }, "comment"],
          [{ ...MODEL, rating: 4, category: "praise" }, "category"],
          [{ ...MODEL, rating: 4, labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }, "labels"],
          [{ ...MODEL, rating: 4, labels: ["x".repeat(65)] }, "labels.0"],
          [{ ...MODEL, rating: 4, labels: "a,b" }, "labels"],
          [{ ...MODEL, target: { type: "agent", id: "openai/gpt-4o" }, rating: 4 }, "targetType"],
          [{ ...MODEL, comment: "a", message: "b" }, "comment"],
        ];
        for (const [body, param] of cases) expectError(await post(h, body), 400, "invalid_request", param);
        expectError(await h.call("POST", "/v1/feedback", { raw: "{not json" }), 400, "invalid_request");
        expectError(await h.call("POST", "/v1/feedback", { raw: "[1]" }), 400, "invalid_request");
        // 4000 characters once trimmed is the limit, not 4000 raw characters.
        expect((await post(h, { ...MODEL, comment: ` ${"y".repeat(4000)} ` })).status).toBe(201);
        expect((await post(h, { ...MODEL, targetId: "z".repeat(512), rating: 1 })).status).toBe(201);
        expect((await list(h)).body.data).toHaveLength(1);
        expect((await summary(h)).body.count).toBe(1);
      });

      test("context and metadata: JSON objects of at most 50 keys and 8 KiB, stored and returned; else 400", async (h) => {
        const context = { requestId: "req_1", chainId: 8453, endpoint: { method: "POST", path: "/v1/chat" }, sdk: { name: "@compose-market/sdk", version: "1" } };
        const metadata = { "ünï": ["a", 1, null, true], nested: { deep: {} } };
        const r = await post(h, { ...MODEL, rating: 5, context, metadata });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        const [item] = (await list(h)).body.data;
        expect(item).toMatchObject({ id: r.body.feedbackId, context, metadata });
        expect((await summary(h)).body.recent[0]).toMatchObject({ context, metadata });
        expect(await h.gateway.services.store.listFeedback({ type: "model", id: MODEL.targetId }, { limit: 1 })).toMatchObject([{ context, metadata }]);
        const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
        const sized = (bytes: number) => ({ pad: "x".repeat(bytes - '{"pad":""}'.length) });
        for (const [body, param] of [
          [{ context: keys(51) }, "context"],
          [{ metadata: sized(8193) }, "metadata"],
          [{ metadata: { pad: "é".repeat(4092) } }, "metadata"], // 8184 + 10 bytes: UTF-8 bytes count, not characters
          [{ context: [1, 2] }, "context"],
          [{ context: "text" }, "context"],
          [{ metadata: 7 }, "metadata"],
        ] as const)
          expectError(await post(h, { ...MODEL, rating: 1, ...body }), 400, "invalid_request", param);
        h.clock.advance(1);
        expect((await post(h, { ...MODEL, rating: 1, context: keys(50), metadata: sized(8192) })).status).toBe(201);
        h.clock.advance(1);
        expect((await post(h, { ...MODEL, rating: 1, context: null, metadata: {} })).status).toBe(201);
        const [empty, full] = (await list(h)).body.data;
        expect([empty.context, empty.metadata]).toEqual([{}, {}]);
        expect([Object.keys(full.context).length, JSON.stringify(full.metadata).length]).toEqual([50, 8192]);
        expect((await list(h)).body.data).toHaveLength(3);
      });

      test(
        'compat "compose": a key reviewer reads compose_key (created, list, summary counts); the origin client\'s body works',
        async (h) => {
          const key = await h.createKey();
          const body = { target: { type: "model", id: MODEL.targetId }, rating: 5, message: "ok", category: "quality", context: { modelId: "gpt" }, metadata: { a: 1 } };
          const r = await post(h, body, bearer(key.token));
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          expect(r.body.verification).toBe("compose_key");
          h.clock.advance(1);
          await post(h, { ...MODEL, comment: "anon" });
          expect((await h.gateway.services.store.listFeedback({ type: "model", id: MODEL.targetId }, { limit: 9 })).map((x) => x.verification)).toEqual([
            "anonymous",
            "service_key",
          ]);
          const items = (await list(h)).body.data;
          expect(items.map((x: any) => x.verification)).toEqual(["anonymous", "compose_key"]);
          expect(items[1]).toMatchObject({ message: "ok", comment: "ok", context: { modelId: "gpt" }, metadata: { a: 1 } });
          const s = (await summary(h)).body;
          expect(s.verification).toEqual({ compose_key: 1, wallet_header: 0, anonymous: 1 });
          expect(s.recent.map((x: any) => x.verification)).toEqual(["anonymous", "compose_key"]);
          expect(JSON.stringify(s)).not.toContain("service_key");
        },
        { compat: "compose" },
      );

      test(
        "targetTypes and ratingTargets come from the options",
        async (h) => {
          expect((await post(h, { targetType: "dataset", targetId: "imagenet", rating: 5 })).status).toBe(201);
          expect((await post(h, { targetType: "endpoint", targetId: "/v1/x", comment: "slow" })).status).toBe(201);
          expectError(await post(h, { targetType: "endpoint", targetId: "/v1/x", rating: 2, comment: "slow" }), 400, "invalid_request", "rating");
          expectError(await post(h, { ...MODEL, rating: 5 }), 400, "invalid_request", "targetType");
          expectError(await list(h), 400, "invalid_request", "targetType");
          expect((await summary(h, { targetType: "dataset", targetId: "imagenet" })).body.ratingAverage).toBe(5);
          expect(h.gateway.describe().join("\n")).toContain("feedback (/v1/feedback): on (target types dataset, endpoint; ratings on dataset)");
          // Option errors are reported at creation, all at once.
          let issues: readonly string[] = [];
          try {
            createGateway({ feedback: { targetTypes: ["dataset", "dataset", "Bad Type"], ratingTargets: ["model"] } });
          } catch (error) {
            issues = (error as GatewayOptionsError).issues;
          }
          expect([...issues].sort()).toEqual([
            expect.stringMatching(/^feedback\.ratingTargets\.0: "model" is not one of targetTypes/),
            expect.stringMatching(/^feedback\.targetTypes\.1: repeats "dataset"/),
            expect.stringMatching(/^feedback\.targetTypes\.2: must be a lower-case slug/),
          ]);
        },
        { feedback: { targetTypes: ["dataset", "endpoint"], ratingTargets: ["dataset"] } },
      );
    });

    describe("reviewer", () => {
      const stored = async (h: Harness) => (await h.gateway.services.store.listFeedback({ type: "model", id: MODEL.targetId }, { limit: 100 }))[0]!;
      /** The wallet header, proven with the internal secret, and a chain header unless `chain` is null. */
      const wallet = (address = WALLET, chain: string | null = String(CHAIN)) => ({
        ...asWallet(address),
        ...(chain === null ? {} : { "x-chain-id": chain }),
      });
      /** The wallet header and a chain header without any proof. */
      const unproven = (address = WALLET, chain = String(CHAIN)) => ({ "x-session-user-address": address, "x-chain-id": chain });

      test("a valid service key → its owner (service_key), whatever wallet the header names; a malformed header → 400", async (h) => {
        const key = await h.createKey();
        const r = await post(h, { ...MODEL, rating: 4 }, { ...bearer(key.token), "x-session-user-address": OWNER, "x-chain-id": "1" });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body.verification).toBe("service_key");
        expect(await stored(h)).toMatchObject({ verification: "service_key", reviewer: OWNER, keyId: key.keyId, chainId: CHAIN });
        // The key names its owner even beside a header naming another wallet.
        h.clock.advance(1);
        expect((await post(h, { ...MODEL, rating: 4 }, { ...bearer(key.token), ...unproven() })).body.verification).toBe("service_key");
        expect(await stored(h)).toMatchObject({ verification: "service_key", reviewer: OWNER });
        // A malformed wallet header is a 400 even beside a valid key (it is parsed before any proof).
        expectError(await post(h, { ...MODEL, rating: 4 }, { ...bearer(key.token), "x-session-user-address": "0xnot-an-address" }), 400, "invalid_request", "x-session-user-address");
        // A bare token works too, and an exhausted budget does not matter.
        await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: "1000" } });
        expect((await post(h, { ...MODEL, rating: 3 }, { authorization: key.token })).body.verification).toBe("service_key");
      });

      test("a proven x-session-user-address with x-chain-id (or x-network-id) → wallet_header, stored lower-case", async (h) => {
        const r = await post(h, { ...MODEL, comment: "hi" }, wallet());
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body.verification).toBe("wallet_header");
        expect(await stored(h)).toMatchObject({ verification: "wallet_header", reviewer: WALLET_LOWER, chainId: CHAIN });
        h.clock.advance(1);
        expect((await post(h, { ...MODEL, comment: "hi" }, { ...asWallet(WALLET), "x-network-id": "10" })).body.verification).toBe("wallet_header");
        expect(await stored(h)).toMatchObject({ reviewer: WALLET_LOWER, chainId: 10 });
      });

      test("an unproven wallet header (alone, or with a wrong internal secret) → anonymous, not refused, reviewer not stored", async (h) => {
        for (const headers of [unproven(), { ...unproven(), "x-internal-secret": "not-the-suite-secret-at-all" }]) {
          h.clock.advance(1);
          const r = await post(h, { ...MODEL, rating: 2 }, headers);
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          expect(r.body.verification).toBe("anonymous");
          const record = await stored(h);
          expect(record).toMatchObject({ feedbackId: r.body.feedbackId, verification: "anonymous" });
          expect(record.reviewer).toBeUndefined();
        }
      });

      test("an unknown, malformed, revoked or expired key is ignored: proven wallet header, else anonymous", async (h) => {
        const revoked = await h.createKey();
        await h.call("DELETE", `/api/keys/${revoked.keyId}`, { headers: bearer(revoked.token) });
        const expiring = await h.createKey({ expiresAt: h.clock.now() + 10 });
        h.clock.advance(10);
        for (const token of [UNKNOWN_TOKEN, "svc-short", "garbage", revoked.token, expiring.token]) {
          const anon = await post(h, { ...MODEL, rating: 2 }, bearer(token));
          expect(anon.status, JSON.stringify(anon.body)).toBe(201);
          expect(anon.body.verification).toBe("anonymous");
          expect((await post(h, { ...MODEL, rating: 2 }, { ...bearer(token), ...unproven() })).body.verification).toBe("anonymous");
          expect((await post(h, { ...MODEL, rating: 2 }, { ...bearer(token), ...wallet() })).body.verification).toBe("wallet_header");
        }
        expect(await stored(h)).toMatchObject({ verification: "wallet_header", reviewer: WALLET_LOWER });
      });

      test("no credential → anonymous; an address without a chain header → anonymous (not stored)", async (h) => {
        expect((await post(h, { ...MODEL, rating: 1 })).body.verification).toBe("anonymous");
        h.clock.advance(1);
        expect((await post(h, { ...MODEL, rating: 1 }, wallet(WALLET, null))).body.verification).toBe("anonymous");
        const record = await stored(h);
        expect(record.verification).toBe("anonymous");
        expect(record.reviewer).toBeUndefined();
      });

      test("a malformed wallet header (no valid key) → 400 x-session-user-address; a malformed chain → 400 x-chain-id", async (h) => {
        for (const bad of ["0x123", "not-an-address", "0xzz000000000000000000000000000000000000a1"]) {
          expectError(await post(h, { ...MODEL, rating: 4 }, wallet(bad)), 400, "invalid_request", "x-session-user-address");
          expectError(await post(h, { ...MODEL, rating: 4 }, unproven(bad)), 400, "invalid_request", "x-session-user-address");
          expectError(await post(h, { ...MODEL, rating: 4 }, { ...bearer(UNKNOWN_TOKEN), ...unproven(bad) }), 400, "invalid_request", "x-session-user-address");
        }
        // Mixed case must carry a valid EIP-55 checksum.
        const badChecksum = WALLET.replace("Ab", "aB");
        expectError(await post(h, { ...MODEL, rating: 4 }, unproven(badChecksum)), 400, "invalid_request", "x-session-user-address");
        // The header is checked before the body: a bad header and a bad body answer about the header.
        expectError(await post(h, { rating: 9 }, wallet("0x1")), 400, "invalid_request", "x-session-user-address");
        expectError(await post(h, { ...MODEL, rating: 4 }, wallet(WALLET, "abc")), 400, "invalid_request", "x-chain-id");
        expectError(await post(h, { ...MODEL, rating: 4 }, wallet(WALLET, "0")), 400, "invalid_request", "x-chain-id");
        expect((await list(h)).body.data).toEqual([]);
      });

      test("the reviewer wallet and key never appear in a list or summary", async (h) => {
        const key = await h.createKey();
        await post(h, { ...MODEL, rating: 5, comment: "via key" }, bearer(key.token));
        await post(h, { ...MODEL, rating: 4, comment: "via wallet" }, wallet());
        await post(h, { ...MODEL, rating: 3, comment: "anonymous" });
        const bodies = [await list(h), await summary(h), await list(h, { ...MODEL, limit: 1 }), await summary(h, { ...MODEL, recentLimit: 100 })].map((r) => {
          expect(r.status).toBe(200);
          return JSON.stringify(r.body);
        });
        for (const text of bodies) {
          for (const secret of [OWNER.slice(2), WALLET_LOWER.slice(2), WALLET.slice(2), key.keyId, key.token])
            expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
          expect(text).not.toMatch(/reviewer|keyId|chainId/);
        }
        expect(JSON.parse(bodies[0]!).data.map((d: any) => d.verification)).toEqual(["anonymous", "wallet_header", "service_key"]);
      });
    });

    describe("list", () => {
      test("newest first; limit default 50, clamped to 1..100; a bad limit is a 400", async (h) => {
        const ids: string[] = [];
        for (let i = 0; i < 105; i++) {
          ids.push((await h.gateway.services.feedback.submit({ ...MODEL, rating: (i % 5) + 1 })).feedbackId);
          if (i % 2 === 0) h.clock.advance(1); // pairs share a createdAt: insert order breaks the tie
        }
        await h.gateway.services.feedback.submit({ targetType: "model", targetId: "other", rating: 1 });
        const newest = [...ids].reverse();
        const page = async (extra: Record<string, string | number>) => {
          const r = await list(h, { ...MODEL, ...extra });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          return (r.body.data as any[]).map((d) => d.id);
        };
        expect(await page({})).toEqual(newest.slice(0, 50));
        expect(await page({ limit: 7 })).toEqual(newest.slice(0, 7));
        expect(await page({ limit: 0 })).toEqual(newest.slice(0, 1));
        expect(await page({ limit: -5 })).toEqual(newest.slice(0, 1));
        expect(await page({ limit: 1000 })).toEqual(newest.slice(0, 100));
        // Not a number: the default (50), as SPEC's clamp rules have it.
        expect(await page({ limit: "abc" })).toEqual(newest.slice(0, 50));
        expect(await page({ targetId: " openai/gpt-4o " })).toHaveLength(50);
        expect((await list(h, { targetType: "model", targetId: "nobody" })).body).toEqual({ object: "list", data: [] });
      });

      test("targetType and targetId are required on both GET routes", async (h) => {
        for (const path of ["/v1/feedback", "/v1/feedback/summary"]) {
          expectError(await h.call("GET", path), 400, "invalid_request", "targetType");
          expectError(await h.call("GET", `${path}?targetType=model`), 400, "invalid_request", "targetId");
          expectError(await h.call("GET", `${path}?targetId=x`), 400, "invalid_request", "targetType");
          expectError(await h.call("GET", `${path}?targetType=model&targetId=`), 400, "invalid_request", "targetId");
          expectError(await h.call("GET", `${path}?targetType=planet&targetId=x`), 400, "invalid_request", "targetType");
        }
        expectError(await h.call("DELETE", "/v1/feedback"), 405, "method_not_allowed");
      });
    });

    describe("summary", () => {
      test("counts, 2-decimal average, distribution, categories, verification; recent newest first", async (h) => {
        const key = await h.createKey();
        const submit = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
          h.clock.advance(1000);
          const r = await post(h, { ...MODEL, ...body }, headers);
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          return r.body.feedbackId as string;
        };
        const a = await submit({ rating: 5, category: "quality" }, bearer(key.token));
        const b = await submit({ rating: 4 }, { ...asWallet(WALLET), "x-chain-id": "1" });
        const c = await submit({ rating: 4, category: "latency" });
        const d = await submit({ comment: "no rating", category: "bug" });
        const r = await summary(h);
        expect(r.status).toBe(200);
        const { recent, ...rest } = r.body;
        expect(rest).toEqual({
          target: { type: "model", id: "openai/gpt-4o" },
          count: 4,
          ratingCount: 3,
          ratingAverage: 4.33,
          ratings: { "1": 0, "2": 0, "3": 0, "4": 2, "5": 1 },
          categories: { general: 1, bug: 1, latency: 1, quality: 1, pricing: 0, settlement: 0, model_capability: 0, safety: 0, docs: 0, integration: 0 },
          verification: { service_key: 1, wallet_header: 1, anonymous: 2 },
        });
        expect(recent.map((x: any) => x.id)).toEqual([d, c, b, a]);
        expect(recent[0]).toEqual({
          id: d,
          target: { type: "model", id: "openai/gpt-4o" },
          category: "bug",
          comment: "no rating",
          message: "no rating",
          labels: [],
          context: {},
          metadata: {},
          verification: "anonymous",
          createdAt: h.clock.now(),
        });
        expect((await summary(h, { ...MODEL, recentLimit: 2 })).body.recent.map((x: any) => x.id)).toEqual([d, c]);
        expect((await summary(h, { ...MODEL, recentLimit: 0 })).body.recent.map((x: any) => x.id)).toEqual([d]);
        expect((await summary(h, { ...MODEL, recentLimit: "many" })) /* not a number: the default, 10 */.body.recent.map((x: any) => x.id)).toEqual([d, c, b, a]);
        await submit({ rating: 1 });
        expect((await summary(h)).body.ratingAverage).toBe(3.5);
      });

      test("recentLimit default 10, clamped to 100; an empty target is all zeros with a null average", async (h) => {
        for (let i = 0; i < 120; i++) await h.gateway.services.feedback.submit({ ...MODEL, rating: 2, comment: `n${i}` });
        expect((await summary(h)).body.recent).toHaveLength(10);
        const big = await summary(h, { ...MODEL, recentLimit: 1000 });
        expect(big.body.recent).toHaveLength(100);
        expect(big.body.recent[0].comment).toBe("n119");
        expect(big.body).toMatchObject({ count: 120, ratingCount: 120, ratingAverage: 2 });
        const empty = await summary(h, { targetType: "agent", targetId: "0xabc" });
        expect(empty.body).toMatchObject({
          target: { type: "agent", id: "0xabc" },
          count: 0,
          ratingCount: 0,
          ratingAverage: null,
          ratings: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 },
          recent: [],
        });
        expect(Object.values(empty.body.categories).every((n) => n === 0)).toBe(true);
        expect(empty.body.verification).toEqual({ service_key: 0, wallet_header: 0, anonymous: 0 });
      });
    });
  });
}
