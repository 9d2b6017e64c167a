import { createMemoryStore } from "../store/memory.js";
import { runGovernanceRouteSuite } from "../testing/index.js";

runGovernanceRouteSuite("memory", { createStore: () => createMemoryStore() });
