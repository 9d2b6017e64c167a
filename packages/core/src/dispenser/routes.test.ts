import { createMemoryStore } from "../store/memory.js";
import { runDispenserRouteSuite } from "@tollgate/testing";

runDispenserRouteSuite("memory", { createStore: () => createMemoryStore() });
