import { createMemoryStore } from "../store/memory.js";
import { runKeyRouteSuite } from "../testing/index.js";

runKeyRouteSuite("memory", { createStore: () => createMemoryStore() });
