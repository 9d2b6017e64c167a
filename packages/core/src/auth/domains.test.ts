/**
 * The hosts a sign-in message may name when `auth.domains` is not set: the explicit CORS origins'
 * hosts, and a loopback Host outside production. A Host any client can set is never believed
 * otherwise, so a phishing page cannot relay a signature its visitor gave it.
 */
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { ANVIL_ACCOUNTS } from "@tollgate/testing";
import { createGateway } from "../gateway.js";
import type { GatewayOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import { describeSignInPolicy, isLoopbackHost, signInDomains, signInPolicy } from "./domains.js";

const wallet = privateKeyToAccount(ANVIL_ACCOUNTS[1]!.privateKey);

/** Signs `wallet` in for `domain` on a request that names `host`; the reply's status and error code. */
async function signIn(options: Partial<GatewayOptions>, host: string, domain: string): Promise<{ status: number; code?: string; message?: string }> {
  const gateway = createGateway(Object.assign({ store: createMemoryStore(), sweepIntervalMs: 0 }, options));
  try {
    const post = (path: string, body: unknown) =>
      gateway.fetch(
        new Request(`http://${host}${path}`, { method: "POST", headers: { "content-type": "application/json", host }, body: JSON.stringify(body) }),
      );
    const nonce = (await (await post("/api/auth/nonce", { address: wallet.address, chainId: 8453 })).json()) as { nonce: string };
    const message = createSiweMessage({
      domain,
      address: wallet.address,
      uri: `https://${domain}/`,
      version: "1",
      chainId: 8453,
      nonce: nonce.nonce,
      issuedAt: new Date(),
    });
    const reply = await post("/api/auth/verify", { message, signature: await wallet.signMessage({ message }) });
    const body = (await reply.json()) as { error?: { code: string; message: string } };
    return Object.assign({ status: reply.status }, body.error ? { code: body.error.code, message: body.error.message } : {});
  } finally {
    await gateway.close();
  }
}

describe("sign-in domains without auth.domains", () => {
  it("a message for the Host a client names (a phishing relay) → 503 not_configured, nothing verified", async () => {
    const r = await signIn({}, "phishing.example", "phishing.example");
    expect(r).toMatchObject({ status: 503, code: "not_configured" });
    expect(r.message).toContain("auth.domains");
  });

  it("a loopback Host is a developer's machine: its own host verifies, another domain does not", async () => {
    for (const host of ["localhost:8787", "127.0.0.1:3000", "app.localhost"]) {
      expect(await signIn({}, host, host)).toEqual({ status: 200 });
    }
    expect(await signIn({}, "localhost:8787", "phishing.example")).toMatchObject({ status: 401, code: "wallet_unverified" });
  });

  it("the explicit CORS origins' hosts verify whatever Host the request names; others do not", async () => {
    const cors = { origins: ["https://app.example.com", "http://dash.example.com:8080"] };
    expect(await signIn({ cors }, "gateway.internal", "app.example.com")).toEqual({ status: 200 });
    expect(await signIn({ cors }, "gateway.internal", "dash.example.com:8080")).toEqual({ status: 200 });
    expect(await signIn({ cors }, "phishing.example", "phishing.example")).toMatchObject({ status: 401, code: "wallet_unverified" });
    // "*" names no site: nothing is trusted from it.
    expect(await signIn({ cors: { origins: "*" } }, "phishing.example", "phishing.example")).toMatchObject({ status: 503, code: "not_configured" });
  });

  it("auth.domains, when set, is the whole list: not even a loopback Host is added", async () => {
    const auth = { domains: ["gateway.example.com"] };
    expect(await signIn({ auth }, "gateway.internal", "gateway.example.com")).toEqual({ status: 200 });
    expect(await signIn({ auth }, "localhost:8787", "localhost:8787")).toMatchObject({ status: 401, code: "wallet_unverified" });
  });
});

describe("signInPolicy and isLoopbackHost", () => {
  it("a production process believes no loopback Host", () => {
    const policy = signInPolicy({ nodeEnv: "production" });
    expect(() => signInDomains(policy, "localhost:8787")).toThrow(/auth\.domains/);
    expect(signInDomains(signInPolicy({ nodeEnv: "production", corsOrigins: ["https://app.example.com"] }), "localhost:8787")).toEqual(["app.example.com"]);
    expect(signInDomains(signInPolicy({ nodeEnv: undefined }), "localhost:8787")).toEqual(["localhost:8787"]);
    expect(describeSignInPolicy(policy)).toContain("503");
  });

  it("loopback names only", () => {
    for (const host of ["localhost", "LOCALHOST:1", "a.b.localhost:9", "127.0.0.1", "127.255.0.9:80", "[::1]", "[::1]:443"])
      expect(isLoopbackHost(host), host).toBe(true);
    const spoofs = [
      "localhost.evil.example",
      "evil.example",
      "127.0.0.1.evil.example",
      "128.0.0.1",
      "[::2]",
      "0.0.0.0",
      "",
      "user@localhost@evil",
      "local host",
    ];
    for (const host of spoofs) expect(isLoopbackHost(host), host).toBe(false);
  });
});
