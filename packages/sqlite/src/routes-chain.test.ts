import { runDispenserRouteSuite, runSettlementRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The dispenser and settlement route suites (each with its own anvil node) on real SQLite files.
const createStore = tempSqliteStores("chain");
runDispenserRouteSuite("sqlite", { createStore });
runSettlementRouteSuite("sqlite", { createStore });
