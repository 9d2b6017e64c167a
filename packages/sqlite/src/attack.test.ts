import { connectDirect, runAttackSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The attack suite on real SQLite files: a fresh file per test.
runAttackSuite("sqlite", { createStore: tempSqliteStores("attack"), connect: connectDirect });
