import { runChatRouteSuite } from "@tollgate/core/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The chat route suite on real SQLite files: a fresh file per test.
runChatRouteSuite("sqlite", { createStore: tempSqliteStores("chat") });
