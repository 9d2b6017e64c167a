import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMediaRouteSuite, runVideoRouteSuite } from "@tollgate/core/testing";
import { afterAll } from "vitest";
import { createSqliteStore } from "./index.js";

// The media and video route suites on a real SQLite file: a fresh file per test, all under one temp directory.
const dir = join(tmpdir(), `tollgate-sqlite-media-${process.pid}-${Date.now()}`);
let n = 0;
const createStore = () => createSqliteStore({ filename: join(dir, `media-${++n}.db`) });

runMediaRouteSuite("sqlite", { createStore });
runVideoRouteSuite("sqlite", { createStore });

afterAll(() => rmSync(dir, { recursive: true, force: true }));
