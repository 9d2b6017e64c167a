import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runKeyRouteSuite, runPaymentRouteSuite } from "@tollgate/core/testing";
import { afterAll } from "vitest";
import { createSqliteStore } from "./index.js";

// The route suites on a real SQLite file: a fresh file per test, all under one temp directory.
const dir = join(tmpdir(), `tollgate-sqlite-routes-${process.pid}-${Date.now()}`);
let n = 0;
const createStore = () => createSqliteStore({ filename: join(dir, `routes-${++n}.db`) });

runKeyRouteSuite("sqlite", { createStore });
runPaymentRouteSuite("sqlite", { createStore });

afterAll(() => rmSync(dir, { recursive: true, force: true }));
