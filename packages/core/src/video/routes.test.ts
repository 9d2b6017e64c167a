import { createMemoryStore } from "../store/memory.js";
import { runVideoRouteSuite } from "../testing/index.js";

runVideoRouteSuite("memory", { createStore: () => createMemoryStore() });
