/**
 * Anonymous ratings on a real port (the client IP is the socket's): one client gives one target one
 * anonymous rating a day, so it cannot outvote the target's proven reviewers; comments, other
 * targets, other clients and proven reviewers are not limited by it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway, createManualClock } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve, type RunningServer } from "./server.js";

const OWNER = "0x00000000000000000000000000000000000000c8";
const SECRET = "feedback-anon-internal-secret-0123456789";
const dir = mkdtempSync(join(tmpdir(), "tollgate-feedback-anon-"));
const clock = createManualClock(Date.now());
let running: RunningServer;
let keyToken = "";

beforeAll(async () => {
  const gateway = createGateway({ store: createSqliteStore({ filename: join(dir, "gateway.db") }), clock, sweepIntervalMs: 0, internalSecret: SECRET });
  running = await serve(gateway, { port: 0 });
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": SECRET },
    body: JSON.stringify({ budgetLimit: "1000", expiresAt: clock.now() + 30 * 86_400_000, networkId: 8453, purpose: "api" }),
  });
  keyToken = ((await res.json()) as { token: string }).token;
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  rmSync(dir, { recursive: true, force: true });
});

const rate = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${running.url}/v1/feedback`, { method: "POST", headers: Object.assign({ "content-type": "application/json" }, headers), body: JSON.stringify(body) });
const summary = async (id: string) =>
  (await (await fetch(`${running.url}/v1/feedback/summary?targetType=model&targetId=${id}`)).json()) as {
    ratingCount: number;
    ratingAverage: number;
    count: number;
  };

it("one anonymous rating per client, target and day; the next is a 429 that stores nothing", async () => {
  expect((await rate({ targetType: "model", targetId: "m1", rating: 5 }, { authorization: `Bearer ${keyToken}` })).status).toBe(201);
  expect((await rate({ targetType: "model", targetId: "m1", rating: 1 })).status).toBe(201);
  for (let i = 0; i < 5; i++) {
    const refused = await rate({ targetType: "model", targetId: "m1", rating: 1 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "rate_limited",
      message: expect.stringMatching(/anonymous rating/),
    });
  }
  expect(await summary("m1")).toMatchObject({ count: 2, ratingCount: 2, ratingAverage: 3 });
  // A comment without a rating, another target, and a proven reviewer are not held by it.
  expect((await rate({ targetType: "model", targetId: "m1", comment: "slow today" })).status).toBe(201);
  expect((await rate({ targetType: "model", targetId: "m2", rating: 4 })).status).toBe(201);
  expect((await rate({ targetType: "model", targetId: "m1", rating: 4 }, { authorization: `Bearer ${keyToken}` })).status).toBe(201);
  // A day later the client may rate the target again.
  clock.advance(86_400_000);
  expect((await rate({ targetType: "model", targetId: "m1", rating: 2 })).status).toBe(201);
  expect((await summary("m1")).ratingCount).toBe(3);
});
