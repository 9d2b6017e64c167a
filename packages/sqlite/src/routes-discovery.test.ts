import { runAgentRouteSuite, runFeedbackRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The feedback and agent route suites on real SQLite files: a fresh file per test.
const createStore = tempSqliteStores("discovery");
runFeedbackRouteSuite("sqlite", { createStore });
runAgentRouteSuite("sqlite", { createStore });
