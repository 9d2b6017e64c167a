/**
 * The SQLite store's readiness probe and open-reservation count, through a gateway's `/readyz`
 * and `/metrics`: a real database file, a second real connection to break its schema, and a
 * closed connection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createGateway, createManualClock, type Store } from "@tollgate/core";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS } from "./migrations.js";
import { startCheckpointer } from "./checkpointer.js";
import { createSqliteStore } from "./store.js";

const dir = mkdtempSync(join(tmpdir(), "tollgate-sqlite-readiness-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

function setup(clock = createManualClock(Date.now())) {
  const filename = join(dir, `ready-${++n}.db`);
  const store = createSqliteStore({ filename });
  const gateway = createGateway({ store, clock, sweepIntervalMs: 0, readiness: { cacheMs: 0 } });
  const get = (path: string) => gateway.fetch(new Request(`http://gateway.test${path}`));
  /** A key of a budget of 1000, and `prepare(maxAmount)` of an intent on it. */
  const withKey = async () => {
    const owner = "0x00000000000000000000000000000000000000a1";
    const { key } = await gateway.services.keys.create({ owner, chainId: 8453, purpose: "api", budgetLimit: 1_000n, expiresAt: clock.now() + 86_400_000 });
    return (maxAmount: bigint) => gateway.services.ledger.prepare({ key, chainId: 8453, service: "s", action: "a", resource: "r", method: "POST", maxAmount });
  };
  return { filename, store, gateway, get, clock, withKey };
}

type Checks = Record<string, { ok: boolean; detail: string }>;
const checksOf = async (res: Response): Promise<Checks> => {
  const body = (await res.json()) as { checks?: Checks; error?: { code: string; details: { checks: Checks } } };
  return body.checks ?? body.error!.details.checks;
};

describe("SQLite readiness", () => {
  it("is ready with every migration applied; not ready (503) once a migration is missing from schema_migrations", async () => {
    const { filename, gateway, get } = setup();
    const ok = await get("/readyz");
    expect([ok.status, (await checksOf(ok)).store]).toEqual([
      200,
      { ok: true, detail: `SQLite, schema at migration ${LATEST}`, latencyMs: expect.any(Number) },
    ]);
    const other = new Database(filename);
    other.prepare("DELETE FROM schema_migrations WHERE version = ?").run(LATEST);
    other.close();
    const missing = await get("/readyz");
    expect([missing.status, (await checksOf(missing)).store]).toEqual([
      503,
      { ok: false, detail: `migrations ${LATEST} are not applied`, latencyMs: expect.any(Number) },
    ]);
    await gateway.close();
  });

  it("is not ready once the connection is closed, while /healthz still answers 200", async () => {
    const { store, gateway, get } = setup();
    await store.close();
    const res = await get("/readyz");
    expect(res.status).toBe(503);
    expect((await checksOf(res)).store).toMatchObject({ ok: false, detail: "the database connection is closed" });
    expect((await get("/healthz")).status).toBe(200);
    // The open-reservation gauge reads the store at scrape time: NaN when it cannot, and the scrape still answers.
    const metrics = await get("/metrics");
    expect(metrics.status).toBe(200);
    // prom-client writes NaN as "Nan"; Prometheus parses either spelling.
    expect(await metrics.text()).toMatch(/^tollgate_open_reservations nan$/im);
    await gateway.close();
  });

  it("reports its group commit on /metrics: the prepares of one turn commit as one group", async () => {
    const { gateway, get, withKey } = setup();
    const prepare = await withKey();
    const before = await (await get("/metrics")).text();
    expect(before).toMatch(/^tollgate_store_commit_groups_total 0$/m);
    await Promise.all(Array.from({ length: 8 }, () => prepare(10n)));
    const text = await (await get("/metrics")).text();
    expect(text).toMatch(/^tollgate_store_commit_groups_total 1$/m);
    expect(text).toMatch(/^tollgate_store_grouped_writes_total 8$/m);
    expect(text).toMatch(/^tollgate_store_group_retries_total 0$/m);
    expect(text).toMatch(/^tollgate_store_deadlocks_total 0$/m);
    await gateway.close();
  });

  it("counts the intents holding a reservation at the store's clock: an overdue one no longer counts, before any sweep", async () => {
    const { store, gateway, clock, withKey } = setup();
    const prepare = await withKey();
    const count = (s: Store) => s.countOpenIntents!(clock.now());
    expect(await count(store)).toBe(0);
    const first = await prepare(10n);
    await prepare(20n);
    expect(await count(store)).toBe(2);
    await gateway.services.ledger.abort({ intentId: first.intent.intentId });
    expect(await count(store)).toBe(1);
    clock.advance(15 * 60_000 + 1);
    expect(await count(store)).toBe(0);
    await gateway.close();
  });

  it("counts on the checkpoint worker's connection once it runs (a scrape never holds the serving thread), on the serving connection without one", async () => {
    const { filename, gateway, clock, withKey } = setup();
    const prepare = await withKey();
    await Promise.all([prepare(10n), prepare(20n), prepare(30n)]);
    // A checkpointer of its own on the same file (beside its own serving connection): it answers
    // once its worker runs, and null once closed (the store then counts on its own connection).
    const serving = new Database(filename);
    const checkpointer = startCheckpointer(serving, filename, 60_000, "NORMAL");
    let n: number | null = null;
    for (let i = 0; i < 200 && n === null; i++) {
      n = await checkpointer.countOpenIntents(clock.now());
      if (n === null) await new Promise((r) => setTimeout(r, 10));
    }
    expect(n).toBe(3);
    expect(await checkpointer.countOpenIntents(clock.now() + 15 * 60_000 + 1)).toBe(0);
    await checkpointer.close();
    expect(await checkpointer.countOpenIntents(clock.now())).toBeNull();
    serving.close();
    await gateway.close();
    const without = createSqliteStore({ filename, checkpointIntervalMs: 0 });
    expect(await without.countOpenIntents!(clock.now())).toBe(3);
    await without.close();
  });
});
