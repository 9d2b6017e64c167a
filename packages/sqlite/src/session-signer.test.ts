/**
 * Migration 17 on a database that predates it: nothing recorded whether a smart wallet's contract
 * proved a session, so the sessions already there count as contract sessions, bound to their
 * chain (the safe reading); sessions opened after it record their signer.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";
import { databaseAtVersion } from "./temp-stores.js";

const dir = join(tmpdir(), `tollgate-sqlite-session-signer-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sqlite session signers", () => {
  it("migration 17 reads the sessions of a database at version 16 as chain-bound", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "v16.db");
    const old = databaseAtVersion(filename, 16);
    const now = Date.now();
    old
      .prepare(
        `INSERT INTO auth_sessions (session_id, token_hash, address, chain_id, domain, created_at, expires_at)
         VALUES ('ses_old', '${"a".repeat(64)}', '0xaa', 8453, 'gateway.example', ${now}, ${now + 86_400_000})`,
      )
      .run();
    expect(migrate(old)).toEqual([17, 18, 19, 20, 21, 22, 23]);
    old.close();

    const store = createSqliteStore({ filename });
    try {
      expect(await store.getSessionByTokenHash("a".repeat(64))).toMatchObject({ sessionId: "ses_old", chainId: 8453, signer: "contract" });
      await store.insertSession({
        sessionId: "ses_new",
        tokenHash: "b".repeat(64),
        address: "0xbb",
        chainId: 1,
        signer: "eoa",
        domain: "gateway.example",
        createdAt: now,
        expiresAt: now + 1,
      });
      expect((await store.getSessionByTokenHash("b".repeat(64)))?.signer).toBe("eoa");
    } finally {
      await store.close();
    }
  });
});
