import { createMemoryStore } from "../store/memory.js";
import { runGovernanceRouteSuite } from "@tollgate/testing";

runGovernanceRouteSuite("memory", { createStore: () => createMemoryStore() });
