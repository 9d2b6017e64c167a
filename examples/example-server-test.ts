/**
 * The one test every minimal example (node, express, fastify) runs: start its `server.ts` on a
 * free port with a temporary SQLite file, use the app's own route and the gateway under
 * /gateway (a read, and a key creation by a wallet signed in with Sign-In with Ethereum), and
 * check that SIGTERM stops it cleanly.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, expect, it } from "vitest";

/** POSTs JSON to `url`; resolves with the status and the parsed body. */
async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** Signs a fresh wallet in at the gateway under `gateway` (nonce → SIWE message → signature → verify); resolves with its address and `sess_…` token. */
async function signIn(gateway: string): Promise<{ address: string; token: string }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const nonce = await postJson(`${gateway}/api/auth/nonce`, { address: account.address, chainId: 8453 });
  expect(nonce.status, JSON.stringify(nonce.body)).toBe(200);
  const message = createSiweMessage({ domain: new URL(gateway).host, address: account.address, uri: `${gateway}/`, version: "1", chainId: 8453, nonce: nonce.body.nonce, issuedAt: new Date() });
  const verified = await postJson(`${gateway}/api/auth/verify`, { message, signature: await account.signMessage({ message }) });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  expect(verified.body.token).toMatch(/^sess_/);
  return { address: account.address.toLowerCase(), token: verified.body.token };
}

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
      const body = { budgetLimit: "1000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" };
      // The owner-wallet header alone proves nothing; a wallet session does.
      const unproven = await postJson(`${url}/gateway/api/keys`, body, { "x-session-user-address": "0x00000000000000000000000000000000000000a1" });
      expect([unproven.status, unproven.body.error?.code]).toEqual([401, "wallet_unverified"]);
      const wallet = await signIn(`${url}/gateway`);
      const key = await postJson(`${url}/gateway/api/keys`, body, { authorization: `Bearer ${wallet.token}` });
      expect([key.status, key.body.budgetLimit], JSON.stringify(key.body)).toEqual([201, "1000"]);
      const listed = await fetch(`${url}/gateway/api/keys`, { headers: { authorization: `Bearer ${wallet.token}` } });
      expect(((await listed.json()) as { keys: { keyId: string }[] }).keys.map((k) => k.keyId)).toEqual([key.body.keyId]);
      expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toEqual([0, null]);
  });
}
