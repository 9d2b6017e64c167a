import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgentRouteSuite, runFeedbackRouteSuite } from "@tollgate/core/testing";
import { afterAll } from "vitest";
import { createSqliteStore } from "./index.js";

// The feedback and agent route suites on a real SQLite file: a fresh file per test.
const dir = join(tmpdir(), `tollgate-sqlite-discovery-${process.pid}-${Date.now()}`);
let n = 0;
const createStore = () => createSqliteStore({ filename: join(dir, `discovery-${++n}.db`) });

runFeedbackRouteSuite("sqlite", { createStore });
runAgentRouteSuite("sqlite", { createStore });

afterAll(() => rmSync(dir, { recursive: true, force: true }));
