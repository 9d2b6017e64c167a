import { createMemoryStore } from "../store/memory.js";
import { runAgentRouteSuite } from "@tollgate/testing";

runAgentRouteSuite("memory", { createStore: () => createMemoryStore() });
