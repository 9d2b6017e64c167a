import { createMemoryStore } from "../store/memory.js";
import { runSettlementRouteSuite } from "@tollgate/testing";

runSettlementRouteSuite("memory", { createStore: () => createMemoryStore() });
