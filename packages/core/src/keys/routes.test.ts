import { createMemoryStore } from "../store/memory.js";
import { runKeyRouteSuite } from "@tollgate/testing";

runKeyRouteSuite("memory", { createStore: () => createMemoryStore() });
