import { createMemoryStore } from "../store/memory.js";
import { runChatRouteSuite } from "@tollgate/testing";

runChatRouteSuite("memory", { createStore: () => createMemoryStore() });
