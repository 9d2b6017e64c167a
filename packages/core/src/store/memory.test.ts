import { runStoreConformance } from "../testing/index.js";
import { createMemoryStore } from "./memory.js";

runStoreConformance("memory", { create: async () => createMemoryStore() });
