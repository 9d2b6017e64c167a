import { createMemoryStore } from "../store/memory.js";
import { runMediaRouteSuite } from "../testing/index.js";

runMediaRouteSuite("memory", { createStore: () => createMemoryStore() });
