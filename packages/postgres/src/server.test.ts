import { runStoreConformance } from "@tollgate/core/testing";
import { it } from "vitest";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

// The conformance suite against a real PostgreSQL server: each test gets a fresh schema and its
// own pool (the store's, from the URL), so the races really run in parallel.
const [server] = testDatabases("conformance", ["server"]);

if (server) {
  runStoreConformance("postgres (server)", { create: () => createPostgresStore({ connectionString: process.env.DATABASE_URL!, schema: server.schema() }) });
} else if (process.env.CI) {
  it("real PostgreSQL conformance needs DATABASE_URL in CI", () => {
    throw new Error("DATABASE_URL is unset: .ci/run must start PostgreSQL (.ci/postgres-start) and export DATABASE_URL");
  });
} else {
  it.skip("DATABASE_URL unset: real PostgreSQL conformance skipped (the pglite run covers the suite)", () => {});
}
