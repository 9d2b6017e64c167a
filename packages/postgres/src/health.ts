/** The PostgreSQL store's migration check, readiness probe and open-reservation count (for `/readyz` and `/metrics`). */
import type { Store } from "@tollgate/core";
import { MIGRATIONS } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import type { TableName } from "./rows.js";

/** The versions of this build's migrations that `schema_migrations` of the store's schema does not record (rejects when the table is missing or the server is unreachable). */
export async function missingMigrations(db: Queryable, t: TableName): Promise<number[]> {
  const { rows } = await db.query<{ version: string }>(`SELECT version::text AS version FROM ${t("schema_migrations")}`);
  const applied = new Set(rows.map((r) => Number(r.version)));
  return MIGRATIONS.filter((m) => !applied.has(m.version)).map((m) => m.version);
}

/**
 * `ready()`: one round trip reading `schema_migrations` (a dozen rows): ok when the server answers
 * and every migration of this build is recorded; a down server or a closed pool rejects, which
 * the readiness check reports with the driver's message. `countOpenIntents(now)`: a count over
 * the partial index of authorized intents (`intents_due`).
 */
export function createHealthOps(db: Queryable, t: TableName): Required<Pick<Store, "ready" | "countOpenIntents">> {
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  return {
    async ready() {
      const missing = await missingMigrations(db, t);
      if (missing.length > 0) return { ok: false, detail: `migrations ${missing.join(", ")} are not applied (run tollgate migrate)` };
      return { ok: true, detail: `PostgreSQL, schema at migration ${latest}` };
    },
    async countOpenIntents(now) {
      const { rows } = await db.query<{ n: string }>(
        `SELECT COUNT(*)::text AS n FROM ${t("intents")} WHERE status = 'authorized' AND expires_at > $1::bigint`,
        [now],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
