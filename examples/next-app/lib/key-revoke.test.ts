/**
 * revokeKey against a real gateway (SQLite file, the offline `local` provider) through the typed
 * client, signed in with SIWE by a viem account and holding only its wallet session, as the page does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthenticationError, createTollgateClient, NotFoundError, PermissionDeniedError, type TollgateClient } from "@tollgate/client";
import { createGateway, type Gateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRevoke, revokedView, revokeKey } from "./key-revoke";

const HOST = "dashboard.test";
const CHAIN = 8453;
const OWNER = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const STRANGER = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

let dir: string;
let gateway: Gateway;

/** A client of the gateway (in-process through `gateway.fetch`), with `apiKey` when given. */
const clientOf = (apiKey?: string): TollgateClient =>
  createTollgateClient({
    baseUrl: `http://${HOST}`,
    maxRetries: 0,
    ...(apiKey ? { apiKey } : {}),
    fetch: (url, init) => gateway.fetch(new Request(url, init)),
  });

/** A client holding only `account`'s wallet session (no service key). */
async function signedIn(account: PrivateKeyAccount): Promise<TollgateClient> {
  const client = clientOf();
  await client.auth.signIn({ address: account.address, chainId: CHAIN, signMessage: (message) => account.signMessage({ message }) });
  return client;
}

const createKey = (owner: TollgateClient, name: string) =>
  owner.keys.create({ name, purpose: "api", networkId: CHAIN, budgetLimit: "5000000", expiresAt: Date.now() + 86_400_000 });

async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-next-revoke-"));
  gateway = createGateway({ store: createSqliteStore({ filename: join(dir, "gw.db") }), auth: { domains: [HOST] }, sweepIntervalMs: 0 });
});
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("revokeKey", () => {
  it("revokes the wallet's key with its session alone: the key's token is refused from then on, a paid call included", async () => {
    const owner = await signedIn(OWNER);
    const target = await createKey(owner, "to revoke");
    const sibling = await createKey(owner, "stays");
    const paid = { model: "text-embedding-3-small", input: "hello" };
    await clientOf(target.token).embeddings.create(paid);

    const revoked = await revokeKey(owner, target.keyId);
    expect(revoked).toEqual({ success: true, keyId: target.keyId, revokedAt: expect.any(Number) });

    const refused = await thrown(() => clientOf(target.token).embeddings.create(paid));
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).code).toBe("key_revoked");
    const inspected = await thrown(() => clientOf(target.token).keys.get(target.keyId));
    expect((inspected as AuthenticationError).code).toBe("key_revoked");

    const { keys } = await owner.keys.list();
    const byId = new Map(keys.map((k) => [k.keyId, k]));
    expect(byId.get(target.keyId)).toMatchObject({ status: "revoked", revokedAt: revoked.revokedAt, budgetUsed: expect.stringMatching(/^[1-9]\d*$/) });
    expect(byId.get(sibling.keyId)?.status).toBe("active");
    // Revoking took nothing but the session: no token was issued on the way.
    const { events } = await owner.keys.events(target.keyId);
    expect(events).toEqual([]);
    await expect(clientOf(sibling.token).embeddings.create(paid)).resolves.toMatchObject({ object: "list" });
  });

  it("cannot revoke another wallet's key: 403, and the key keeps working", async () => {
    const owner = await signedIn(OWNER);
    const victim = await createKey(owner, "not yours");
    const stranger = await signedIn(STRANGER);
    const error = await thrown(() => revokeKey(stranger, victim.keyId));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).code).toBe("forbidden");
    expect((await clientOf(victim.token).keys.get(victim.keyId)).status).toBe("active");
  });

  it("answers 404 for a key that does not exist", async () => {
    const error = await thrown(async () => revokeKey(await signedIn(OWNER), "key_doesnotexist"));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe("key_not_found");
  });

  it("rejects with AuthenticationError once the wallet session has ended, and revokes nothing", async () => {
    const owner = await signedIn(OWNER);
    const key = await createKey(owner, "session ends");
    await owner.auth.signOut();
    const error = await thrown(() => revokeKey(owner, key.keyId));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((await clientOf(key.token).keys.get(key.keyId)).status).toBe("active");
  });
});

describe("canRevoke and revokedView", () => {
  it("offers revoking live keys only", () => {
    expect((["active", "exhausted", "revoked", "expired"] as const).map((status) => canRevoke({ status }))).toEqual([true, true, false, false]);
  });

  it("marks the key revoked at the gateway's time and changes nothing else", () => {
    const key = {
      keyId: "key_1",
      purpose: "api" as const,
      chainId: CHAIN,
      budgetLimit: "5000000",
      budgetUsed: "1",
      budgetReserved: "2",
      budgetRemaining: "4999997",
      status: "active" as const,
      createdAt: 1,
      expiresAt: 2,
    };
    expect(revokedView(key, { revokedAt: 42 })).toEqual({ ...key, status: "revoked", revokedAt: 42 });
  });
});
