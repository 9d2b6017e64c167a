import { createMemoryStore } from "../store/memory.js";
import { runFundingRouteSuite, runSettlementRouteSuite } from "@tollgate/testing";

runSettlementRouteSuite("memory", { createStore: () => createMemoryStore() });
runFundingRouteSuite("memory", { createStore: () => createMemoryStore() });
