/** Conformance tests of {@link AuthStore}: single-use SIWE nonces and wallet sessions. */
import { expect } from "vitest";
import type { AuthNonceRecord, SessionRecord } from "@tollgate/core";
import { CHAIN, DAY, OTHER_OWNER, OWNER, T0, uniq, type StoreTest } from "./store-fixtures.js";

const TTL = 5 * 60_000;

/** A nonce for OWNER issued at T0, valid for five minutes. */
function makeNonce(overrides: Partial<AuthNonceRecord> = {}): AuthNonceRecord {
  return { nonce: `n${uniq()}`, address: OWNER, chainId: CHAIN, issuedAt: T0, expiresAt: T0 + TTL, ...overrides };
}

/** A session of OWNER created at T0, valid for a day. */
function makeSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const id = uniq();
  return {
    sessionId: `ses_${id}`,
    tokenHash: id.padStart(64, "e"),
    address: OWNER,
    chainId: CHAIN,
    signer: "eoa",
    domain: "gateway.example",
    createdAt: T0,
    expiresAt: T0 + DAY,
    ...overrides,
  };
}

export const authTests = {
  "auth: a nonce is consumed once, only by its own address (any case), before it expires": async ({ store }) => {
    const record = makeNonce();
    await store.insertAuthNonce(record);
    // Another address gets nothing and does not burn the nonce for its owner.
    expect(await store.consumeAuthNonce({ nonce: record.nonce, address: OTHER_OWNER, now: T0 + 1 })).toBeNull();
    const consumed = await store.consumeAuthNonce({ nonce: record.nonce, address: OWNER.toUpperCase().replace("0X", "0x"), now: T0 + 1 });
    expect(consumed).toEqual(record);
    expect(await store.consumeAuthNonce({ nonce: record.nonce, address: OWNER, now: T0 + 2 })).toBeNull();
    expect(await store.consumeAuthNonce({ nonce: `n${uniq()}`, address: OWNER, now: T0 })).toBeNull();
    // Nonces compare exactly (SIWE nonces are case-sensitive).
    const mixed = makeNonce({ nonce: `AbC${uniq()}` });
    await store.insertAuthNonce(mixed);
    expect(await store.consumeAuthNonce({ nonce: mixed.nonce.toLowerCase(), address: OWNER, now: T0 })).toBeNull();
    expect(await store.consumeAuthNonce({ nonce: mixed.nonce, address: OWNER, now: T0 })).toEqual(mixed);
    // The address is compared lower-case on both sides.
    const upper = makeNonce({ address: OWNER.toUpperCase().replace("0X", "0x") });
    await store.insertAuthNonce(upper);
    expect((await store.consumeAuthNonce({ nonce: upper.nonce, address: OWNER, now: T0 }))?.address.toLowerCase()).toBe(OWNER);
  },

  "auth: an expired nonce is refused (at expiresAt exactly); one millisecond before, it is consumed": async ({ store }) => {
    const late = makeNonce();
    const onTime = makeNonce();
    await store.insertAuthNonce(late);
    await store.insertAuthNonce(onTime);
    expect(await store.consumeAuthNonce({ nonce: late.nonce, address: OWNER, now: T0 + TTL })).toBeNull();
    expect(await store.consumeAuthNonce({ nonce: late.nonce, address: OWNER, now: T0 + TTL + 1 })).toBeNull();
    expect(await store.consumeAuthNonce({ nonce: onTime.nonce, address: OWNER, now: T0 + TTL - 1 })).toEqual(onTime);
  },

  "auth: a duplicate nonce, sessionId or session tokenHash is rejected": async ({ store }) => {
    const nonce = makeNonce();
    await store.insertAuthNonce(nonce);
    await expect(store.insertAuthNonce(makeNonce({ nonce: nonce.nonce, address: OTHER_OWNER }))).rejects.toThrow();
    // The first one is intact.
    expect(await store.consumeAuthNonce({ nonce: nonce.nonce, address: OWNER, now: T0 })).toEqual(nonce);
    const session = makeSession();
    await store.insertSession(session);
    await expect(store.insertSession(makeSession({ sessionId: session.sessionId }))).rejects.toThrow();
    await expect(store.insertSession(makeSession({ tokenHash: session.tokenHash }))).rejects.toThrow();
    expect(await store.getSessionByTokenHash(session.tokenHash)).toEqual(session);
  },

  "auth: a session keeps what proved it (an EOA's key, or a contract on its chain)": async ({ store }) => {
    const eoa = makeSession();
    const contract = makeSession({ signer: "contract", chainId: 8453 });
    await store.insertSession(eoa);
    await store.insertSession(contract);
    expect((await store.getSessionByTokenHash(eoa.tokenHash))?.signer).toBe("eoa");
    expect(await store.getSessionByTokenHash(contract.tokenHash)).toEqual(contract);
    expect((await store.revokeSession(contract.tokenHash, T0 + 1))?.signer).toBe("contract");
  },

  "auth: 20 concurrent consumes of one nonce: exactly one wins": async ({ store }) => {
    const record = makeNonce();
    await store.insertAuthNonce(record);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.consumeAuthNonce({ nonce: record.nonce, address: OWNER, now: T0 + 1 })));
    expect(results.filter((r) => r !== null)).toEqual([record]);
  },

  "auth: a session is found by its token hash; revoking keeps the first revokedAt; unknown is null": async ({ store }) => {
    const session = makeSession({ domain: "app.example:8443" });
    await store.insertSession(session);
    expect(await store.getSessionByTokenHash(session.tokenHash)).toEqual(session);
    expect(await store.getSessionByTokenHash("f".repeat(64))).toBeNull();
    // Returned records are copies.
    const read = await store.getSessionByTokenHash(session.tokenHash);
    if (read) read.revokedAt = 1;
    expect(await store.getSessionByTokenHash(session.tokenHash)).toEqual(session);

    const revoked = await store.revokeSession(session.tokenHash, T0 + 10);
    expect(revoked).toEqual({ ...session, revokedAt: T0 + 10 });
    expect(await store.revokeSession(session.tokenHash, T0 + 20)).toEqual(revoked);
    expect(await store.getSessionByTokenHash(session.tokenHash)).toEqual(revoked);
    expect(await store.revokeSession("f".repeat(64), T0)).toBeNull();
    // A session inserted already revoked round-trips too.
    const signedOut = makeSession({ revokedAt: T0 + 5 });
    await store.insertSession(signedOut);
    expect(await store.getSessionByTokenHash(signedOut.tokenHash)).toEqual(signedOut);
  },

  "auth: 20 concurrent revocations of one session: one revokedAt, and every caller sees it": async ({ store }) => {
    const session = makeSession();
    await store.insertSession(session);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.revokeSession(session.tokenHash, T0 + 100 + i)));
    const times = new Set(results.map((r) => r?.revokedAt));
    expect(times.size).toBe(1);
    const [at] = [...times];
    expect((await store.getSessionByTokenHash(session.tokenHash))?.revokedAt).toBe(at);
  },

  "auth: pruneAuth deletes expired nonces and sessions (revoked or not) and counts them": async ({ store }) => {
    const now = T0 + 1000;
    const expiredNonces = [makeNonce({ expiresAt: now }), makeNonce({ expiresAt: now - 1 })];
    const liveNonce = makeNonce({ expiresAt: now + 1 });
    const expiredSessions = [makeSession({ expiresAt: now }), makeSession({ expiresAt: now - 500, revokedAt: T0 })];
    const liveSessions = [makeSession({ expiresAt: now + 1 }), makeSession({ expiresAt: now + DAY, revokedAt: T0 })];
    for (const n of [...expiredNonces, liveNonce]) await store.insertAuthNonce(n);
    for (const s of [...expiredSessions, ...liveSessions]) await store.insertSession(s);

    expect(await store.pruneAuth(now)).toBe(4);
    expect(await store.pruneAuth(now)).toBe(0);
    for (const s of expiredSessions) expect(await store.getSessionByTokenHash(s.tokenHash)).toBeNull();
    for (const s of liveSessions) expect(await store.getSessionByTokenHash(s.tokenHash)).toEqual(s);
    // A pruned nonce is gone for good (consumable again only if inserted again).
    expect(await store.consumeAuthNonce({ nonce: expiredNonces[0]!.nonce, address: OWNER, now: T0 })).toBeNull();
    expect(await store.consumeAuthNonce({ nonce: liveNonce.nonce, address: OWNER, now })).toEqual(liveNonce);
    // The nonce value of a pruned nonce can be issued again.
    await store.insertAuthNonce(expiredNonces[1]!);
  },
} satisfies Record<string, StoreTest>;
