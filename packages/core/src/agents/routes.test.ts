import { createMemoryStore } from "../store/memory.js";
import { runAgentRouteSuite } from "../testing/index.js";

runAgentRouteSuite("memory", { createStore: () => createMemoryStore() });
