import { createMemoryStore } from "../store/memory.js";
import { runPaymentRouteSuite } from "@tollgate/testing";

runPaymentRouteSuite("memory", { createStore: () => createMemoryStore() });
