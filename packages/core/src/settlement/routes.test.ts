import { createMemoryStore } from "../store/memory.js";
import { runSettlementRouteSuite } from "../testing/gateway-suite-settlement.js";

runSettlementRouteSuite("memory", { createStore: () => createMemoryStore() });
