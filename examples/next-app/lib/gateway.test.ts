/**
 * getGateway's environment: TOLLGATE_AUTH_DOMAINS decides which hosts a sign-in message may name,
 * so a page on another host (a phishing page relaying a signature it was given) cannot open a
 * session; without it only a loopback Host is believed. Real SQLite files, the real
 * client, messages signed by a viem account.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthenticationError, createTollgateClient, ServiceUnavailableError } from "@tollgate/client";
import type { Gateway } from "@tollgate/core";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { getGateway } from "./gateway";

const WALLET = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
const holder = globalThis as typeof globalThis & { __tollgateGateway?: Gateway };
const saved = { db: process.env.TOLLGATE_DB, domains: process.env.TOLLGATE_AUTH_DOMAINS };
const dirs: string[] = [];

/** A fresh process-wide gateway on its own database, with `domains` as TOLLGATE_AUTH_DOMAINS (unset when undefined). */
function freshGateway(domains: string | undefined): Gateway {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-next-gateway-"));
  dirs.push(dir);
  process.env.TOLLGATE_DB = join(dir, "gw.db");
  if (domains === undefined) delete process.env.TOLLGATE_AUTH_DOMAINS;
  else process.env.TOLLGATE_AUTH_DOMAINS = domains;
  delete holder.__tollgateGateway;
  return getGateway();
}

/** Signs in through a client whose pages are served from `host` (the SIWE domain and the request's Host). */
async function signInFrom(gateway: Gateway, host: string): Promise<unknown> {
  const client = createTollgateClient({ baseUrl: `http://${host}`, maxRetries: 0, fetch: (url, init) => gateway.fetch(new Request(url, init)) });
  try {
    return await client.auth.signIn({ address: WALLET.address, chainId: 8453, signMessage: (message) => WALLET.signMessage({ message }) });
  } catch (error) {
    return error;
  }
}

afterEach(async () => {
  await holder.__tollgateGateway?.close();
  delete holder.__tollgateGateway;
  for (const [name, value] of [
    ["TOLLGATE_DB", saved.db],
    ["TOLLGATE_AUTH_DOMAINS", saved.domains],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("getGateway", () => {
  it("TOLLGATE_AUTH_DOMAINS: a sign-in for a listed host opens a session; one from another host is refused", async () => {
    const gateway = freshGateway(" app.example.com , admin.example.com ");
    expect(gateway.describe().join("\n")).toContain("sign-in domain: app.example.com, admin.example.com");
    const refused = await signInFrom(gateway, "phish.example");
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).code).toBe("wallet_unverified");
    expect((refused as AuthenticationError).message).toContain("signs in to phish.example, not to this gateway (app.example.com, admin.example.com)");
    expect(await signInFrom(gateway, "app.example.com")).toMatchObject({ token: expect.stringMatching(/^sess_/), address: WALLET.address.toLowerCase() });
    expect(await signInFrom(gateway, "admin.example.com")).toMatchObject({ token: expect.stringMatching(/^sess_/) });
  });

  it("without TOLLGATE_AUTH_DOMAINS only a loopback Host signs in (a developer's machine); a relay naming its own Host gets 503", async () => {
    const gateway = freshGateway(undefined);
    expect(gateway.describe().join("\n")).toContain("sign-in domain: a loopback Host");
    const relayed = await signInFrom(gateway, "phish.example");
    expect(relayed).toBeInstanceOf(ServiceUnavailableError);
    expect((relayed as ServiceUnavailableError).code).toBe("not_configured");
    expect(await signInFrom(gateway, "localhost:3000")).toMatchObject({ token: expect.stringMatching(/^sess_/) });
  });
});
