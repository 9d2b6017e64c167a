/**
 * The one test every minimal example (node, express, fastify) runs: start its `server.ts` on a
 * free port with a temporary SQLite file, use the app's own route and the gateway under
 * /gateway (a read and a key creation), and check that SIGTERM stops it cleanly.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

/** Registers the example test for the example in `exampleDir`. */
export function runExampleServerTest(exampleDir: string): void {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-example-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves the gateway under /gateway beside the app's own routes, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=tollgate-source", "server.ts"], {
      cwd: exampleDir,
      env: { ...process.env, PORT: "0", DB: join(dir, "ex.db") },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = once(child, "exit");
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
          if (m) resolve(m[0]);
        });
        child.on("exit", (code) => reject(new Error(`example exited with ${code}`)));
      });
      expect(await (await fetch(`${url}/health`)).text()).toBe("ok");
      const models = await fetch(`${url}/gateway/v1/models?limit=2`);
      expect(models.status).toBe(200);
      expect(((await models.json()) as { data: unknown[] }).data).toHaveLength(2);
      const owner = "0x00000000000000000000000000000000000000a1";
      const body = JSON.stringify({ budgetLimit: "1000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" });
      const key = await fetch(`${url}/gateway/api/keys`, { method: "POST", headers: { "content-type": "application/json", "x-session-user-address": owner }, body });
      expect([key.status, ((await key.json()) as { budgetLimit: string }).budgetLimit]).toEqual([201, "1000"]);
      expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toEqual([0, null]);
  });
}
