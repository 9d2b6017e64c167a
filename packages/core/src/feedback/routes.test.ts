import { createMemoryStore } from "../store/memory.js";
import { runFeedbackRouteSuite } from "../testing/index.js";

runFeedbackRouteSuite("memory", { createStore: () => createMemoryStore() });
