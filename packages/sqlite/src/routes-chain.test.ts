import { runDispenserRouteSuite, runFundingRouteSuite, runSettlementRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The dispenser, settlement and funding route suites (each with its own anvil node) on real SQLite files.
const createStore = tempSqliteStores("chain");
runDispenserRouteSuite("sqlite", { createStore });
runSettlementRouteSuite("sqlite", { createStore });
runFundingRouteSuite("sqlite", { createStore });
