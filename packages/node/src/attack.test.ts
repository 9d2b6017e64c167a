import { runAttackSuite } from "@tollgate/testing";
import { createSqliteStore } from "@tollgate/sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { serve } from "./server.js";

// The attack suite through the real Node server on a real port, over a SQLite file.
const dir = mkdtempSync(join(tmpdir(), "tollgate-attack-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runAttackSuite("standalone server on a real port (sqlite)", {
  createStore: () => createSqliteStore({ filename: join(dir, `attack-${++n}.db`) }),
  connect: async (gateway) => {
    const running = await serve(gateway, { port: 0 });
    return { fetch: (path, init) => fetch(`${running.url}${path}`, init), close: () => running.close() };
  },
});
