import { createMemoryStore } from "../store/memory.js";
import { runDispenserRouteSuite } from "../testing/gateway-suite-dispenser.js";

runDispenserRouteSuite("memory", { createStore: () => createMemoryStore() });
