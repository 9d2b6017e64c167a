import { runFundingRouteSuite } from "@tollgate/testing";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

// Key funding on Postgres, whose store answers asynchronously (where two creates of one wallet really interleave): PGlite always, the real server too when DATABASE_URL is set.
for (const database of testDatabases("funding")) {
  runFundingRouteSuite(`postgres (${database.name})`, { createStore: () => createPostgresStore({ pool: database.db, schema: database.schema() }) });
}
