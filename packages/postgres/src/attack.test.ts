import { connectDirect, runAttackSuite } from "@tollgate/testing";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

// The attack suite on Postgres: PGlite always, the real server too when DATABASE_URL is set.
for (const database of testDatabases("attack")) {
  runAttackSuite(`postgres (${database.name})`, { createStore: () => createPostgresStore({ pool: database.db, schema: database.schema() }), connect: connectDirect });
}
