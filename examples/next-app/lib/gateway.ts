/**
 * The app's one Tollgate gateway, on SQLite with the offline `local` provider. Created on the
 * first request (so `next build` never opens the database) and kept on `globalThis` so that dev
 * hot reloads reuse the open database instead of leaking a connection per edit.
 */
import { createGateway, type Gateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";

const holder = globalThis as typeof globalThis & { __tollgateGateway?: Gateway };

/** Returns the process-wide gateway; the database file is `TOLLGATE_DB` (default `./data/tollgate.db`). */
export function getGateway(): Gateway {
  holder.__tollgateGateway ??= createGateway({
    store: createSqliteStore({ filename: process.env.TOLLGATE_DB ?? "./data/tollgate.db" }),
  });
  return holder.__tollgateGateway;
}
