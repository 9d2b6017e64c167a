/**
 * What a test of a real PostgreSQL server needs: the server's URL (`DATABASE_URL`), a policy when
 * it is absent (skip locally with the reason in the title, fail in CI), and a throwaway schema.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";

/** How to get a server: the CI script prints the URL of a throwaway loopback cluster. */
const HOW = "start one with: export DATABASE_URL=$(.ci/postgres-start)";

/**
 * Registers `describe(title, …)` with the URL of the test server. Without `DATABASE_URL` the block
 * is skipped with the reason in its title, except under CI (`CI` set), where one failing test
 * says what is missing: CI must never pass by skipping.
 */
export function describeWithDatabase(title: string, body: (url: string) => void): void {
  const url = process.env["DATABASE_URL"];
  if (url) describe(title, () => body(url));
  else if (process.env["CI"])
    describe(title, () =>
      it("needs a PostgreSQL server", () => {
        throw new Error(`DATABASE_URL is not set, and CI must run the PostgreSQL tests: ${HOW}`);
      }),
    );
  else describe.skip(`${title} (skipped: DATABASE_URL is not set; ${HOW})`, () => body(""));
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
