import { runChatRouteSuite } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

// The chat route suite on real SQLite files: a fresh file per test.
runChatRouteSuite("sqlite", { createStore: tempSqliteStores("chat") });
