import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDispenserRouteSuite, runSettlementRouteSuite } from "@tollgate/core/testing";
import { afterAll } from "vitest";
import { createSqliteStore } from "./index.js";

// The dispenser and settlement route suites (each with its own anvil node) on real SQLite files.
const dir = join(tmpdir(), `tollgate-sqlite-chain-${process.pid}-${Date.now()}`);
let n = 0;
const createStore = () => createSqliteStore({ filename: join(dir, `chain-${++n}.db`) });

runDispenserRouteSuite("sqlite", { createStore });
runSettlementRouteSuite("sqlite", { createStore });

afterAll(() => rmSync(dir, { recursive: true, force: true }));
