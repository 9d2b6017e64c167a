import { createMemoryStore } from "../store/memory.js";
import { runPaymentRouteSuite } from "../testing/index.js";

runPaymentRouteSuite("memory", { createStore: () => createMemoryStore() });
