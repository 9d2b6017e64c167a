/** The SQLite store's readiness probe and its open-reservation count (for `/readyz` and `/metrics`). */
import type Database from "better-sqlite3";
import type { Store } from "@tollgate/core";
import { MIGRATIONS } from "./migrations.js";

/** The count of open (authorized, not yet due) intents; its plan is checked in plans.test.ts. */
export const OPEN_INTENTS_SQL = "SELECT COUNT(*) AS n FROM intents WHERE status = 'authorized' AND expires_at > ?";

/**
 * `ready()`: the connection is open and `schema_migrations` holds every migration of this build
 * (one read of a table of a dozen rows). `countOpenIntents(now)`: a count over the partial index of
 * authorized intents (`intents_due`), never the table; by `offThread` (the checkpoint worker's
 * connection) when it answers, on `db` otherwise.
 */
export function createHealthOps(
  db: Database.Database,
  offThread?: (now: number) => Promise<number | null>,
): Required<Pick<Store, "ready" | "countOpenIntents">> {
  const applied = db.prepare<[], { version: bigint }>("SELECT version FROM schema_migrations");
  const open = db.prepare<[number], { n: bigint }>(OPEN_INTENTS_SQL);
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  return {
    async ready() {
      if (!db.open) return { ok: false, detail: "the database connection is closed" };
      const versions = new Set(applied.all().map((r) => Number(r.version)));
      const missing = MIGRATIONS.filter((m) => !versions.has(m.version)).map((m) => m.version);
      if (missing.length > 0) return { ok: false, detail: `migrations ${missing.join(", ")} are not applied` };
      return { ok: true, detail: `SQLite, schema at migration ${latest}` };
    },
    async countOpenIntents(now) {
      return (await offThread?.(now)) ?? Number(open.get(now)?.n ?? 0n);
    },
  };
}
