import { createMemoryStore } from "../store/memory.js";
import { runFeedbackRouteSuite } from "@tollgate/testing";

runFeedbackRouteSuite("memory", { createStore: () => createMemoryStore() });
