import { createMemoryStore } from "../store/memory.js";
import { runChatRouteSuite } from "../testing/index.js";

runChatRouteSuite("memory", { createStore: () => createMemoryStore() });
