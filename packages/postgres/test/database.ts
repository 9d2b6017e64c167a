/**
 * What a test of a real PostgreSQL server needs: the server's URL (`DATABASE_URL`), a policy when
 * it is absent (skip locally with the reason in the title, fail in CI), and a throwaway schema.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe } from "vitest";
import { serverMissing } from "../src/test-databases.js";

/**
 * Registers `describe(title, …)` with the URL of the test server; without `DATABASE_URL` the
 * block holds what {@link serverMissing} registers (a failure under CI, else a named skip).
 */
export function describeWithDatabase(title: string, body: (url: string) => void): void {
  const url = process.env["DATABASE_URL"];
  if (url) describe(title, () => body(url));
  else describe(title, () => serverMissing(title));
}

/** A schema name no other run uses (`<prefix>_<time>_<random>`); the schema itself is created by the store's migrations. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

/** Drops `schema` and everything in it (for `afterAll`). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
