import { runGovernanceRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The key governance route suite on real SQLite files: a fresh file per test.
runGovernanceRouteSuite("sqlite", { createStore: tempSqliteStores("governance") });
