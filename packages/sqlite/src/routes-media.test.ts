import { runMediaRouteSuite, runVideoRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The media and video route suites on real SQLite files: a fresh file per test.
const createStore = tempSqliteStores("media");
runMediaRouteSuite("sqlite", { createStore });
runVideoRouteSuite("sqlite", { createStore });
