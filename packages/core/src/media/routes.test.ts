import { createMemoryStore } from "../store/memory.js";
import { runMediaRouteSuite } from "@tollgate/testing";

runMediaRouteSuite("memory", { createStore: () => createMemoryStore() });
