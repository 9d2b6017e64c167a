import { createMemoryStore } from "../store/memory.js";
import { runVideoRouteSuite } from "@tollgate/testing";

runVideoRouteSuite("memory", { createStore: () => createMemoryStore() });
