import { runStoreConformance } from "@tollgate/testing";
import { createMemoryStore } from "./memory.js";

runStoreConformance("memory", { create: async () => createMemoryStore() });
