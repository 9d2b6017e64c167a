import { runStoreConformance } from "@tollgate/testing";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

// The conformance suite against a real PostgreSQL server: each test gets a fresh schema and its
// own pool (the store's, from the URL), so the races really run in parallel.
const [server] = testDatabases("conformance", ["server"]);

if (server) {
  runStoreConformance("postgres (server)", { create: () => createPostgresStore({ connectionString: process.env.DATABASE_URL!, schema: server.schema() }) });
} else {
  serverMissing("real PostgreSQL conformance");
}
