import { runKeyRouteSuite, runPaymentRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The key and payment route suites on real SQLite files: a fresh file per test.
const createStore = tempSqliteStores("routes");
runKeyRouteSuite("sqlite", { createStore });
runPaymentRouteSuite("sqlite", { createStore });
