import { createMemoryStore } from "../store/memory.js";
import { connectDirect, runAttackSuite } from "@tollgate/testing";

runAttackSuite("memory store, gateway.fetch", { createStore: () => createMemoryStore(), connect: connectDirect });
