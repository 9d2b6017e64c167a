import { runStoreConformance } from "@tollgate/testing";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

// One PGlite for the file (starting one takes seconds); every test gets a fresh schema.
const [pglite] = testDatabases("conformance", ["pglite"]);
const { db, schema } = pglite!;

runStoreConformance("postgres (pglite)", { create: () => createPostgresStore({ pool: db, schema: schema() }) });
