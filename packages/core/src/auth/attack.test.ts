import { createMemoryStore } from "../store/memory.js";
import { connectDirect, runAttackSuite } from "../testing/index.js";

runAttackSuite("memory store, gateway.fetch", { createStore: () => createMemoryStore(), connect: connectDirect });
