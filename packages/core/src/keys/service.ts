/**
 * Service keys: creation (token returned once, only its hash stored), listing, the bearer rules
 * of inspect/revoke, and the legacy direct charge.
 */
import type { Clock } from "../clock.js";
import { GatewayError, invalidRequest } from "../errors.js";
import type { IdGenerator } from "../ids.js";
import { decodeKeysetCursor, encodeKeysetCursor } from "../keyset-cursor.js";
import type { BudgetPeriod, KeyPurpose, KeyRateLimit, KeyRecord, Store } from "../store/types.js";
import { windowStart } from "./period.js";
import { bearerToken, hashToken, looksLikeToken, mintToken, tokenPrefix } from "./token.js";
import { budgetHeaders, remainingOf } from "./view.js";
import type { FundingGuard } from "../settlement/funding.js";
import { noopTelemetry, recordCharge, UNMETERED, type RequestTrace, type Telemetry } from "../observability/telemetry.js";

/** What creating a key needs (validated by the route). */
export interface CreateKeyInput {
  readonly owner: string;
  readonly chainId: number;
  readonly purpose: KeyPurpose;
  readonly budgetLimit: bigint;
  readonly expiresAt: number;
  readonly name?: string | undefined;
  /** The key's own request rate limit. */
  readonly rateLimit?: KeyRateLimit | undefined;
  /** A calendar budget window (UTC); the first window is the one containing the creation time. */
  readonly budgetPeriod?: BudgetPeriod | undefined;
  /** Allowed models (exact ids, `<provider>/*`), checked against the catalog by the route. */
  readonly models?: readonly string[] | undefined;
  /** Per-model caps inside the budget. */
  readonly modelBudgets?: Readonly<Record<string, bigint>> | undefined;
}

/** The key service. Every method throws `GatewayError` with an error code of docs/api.md "Errors" on refusal. */
export interface KeyService {
  /**
   * Creates a key; a `session` key supersedes the owner's active session key on the same chain. The
   * token is returned once. Beyond the wallet's cap of live keys: 409 `too_many_keys`. On a
   * settlement chain, the wallet's funds must cover the new budget too (see `FundingGuard`): 402
   * `insufficient_funds`, or 503 `chain_unavailable` when the chain cannot be read.
   */
  create(input: CreateKeyInput): Promise<{ key: KeyRecord; token: string; superseded: string[] }>;
  /**
   * A newest-first page of an owner's keys; `cursor` is the opaque `next_cursor` of the previous
   * page; `chainId` keeps one chain's keys. Overdue intents of the listed keys are released first
   * (release on read).
   */
  list(owner: string, options: { limit: number; cursor?: string | undefined; chainId?: number | undefined }): Promise<{ keys: KeyRecord[]; nextCursor: string | null }>;
  /**
   * The usable key of an `Authorization` header. Throws 401 `authentication_required` (none),
   * `invalid_key` (unknown or malformed), `key_revoked`, `key_expired`.
   */
  authenticate(authorization: string | undefined): Promise<KeyRecord>;
  /**
   * The usable key of an `Authorization` header for a call that spends (paid calls, prepare), as
   * {@link authenticate}, but served from a small in-process cache for up to `keyCacheMs`. Only the
   * key's identity is trusted from the cache: the store's guarded reserve re-checks revocation,
   * expiry and budget, so a key revoked by another process is refused at its first spend, and a
   * revoke through this service empties the cache at once.
   */
  spender(authorization: string | undefined): Promise<KeyRecord>;
  /** The key of an `Authorization` header whatever its status; null when none is sent; 401 `invalid_key` when unknown. */
  identify(authorization: string | undefined): Promise<KeyRecord | null>;
  /**
   * The inspect/revoke rule: the bearer is a live key (unrevoked, unexpired) that is the target
   * itself or another key of the same owner on the same chain; a revoked or expired bearer is 401 `key_revoked` /
   * `key_expired`, even on itself (so a revoked key cannot revoke itself again: 401; a sibling
   * can, and gets the first revocation back). Throws 401 (bearer), 404 `key_not_found`, 403
   * `forbidden`. The target is returned with its overdue intents released.
   */
  authorizeFor(authorization: string | undefined, targetKeyId: string): Promise<KeyRecord>;
  /**
   * The newest live `session` key of (owner, chainId) — unrevoked and unexpired — with its
   * overdue intents released, or null. What `GET /api/session` and `GET /api/settlement/status` report.
   */
  activeSession(owner: string, chainId: number): Promise<KeyRecord | null>;
  /** Empties the spender cache (after a key changed: update, rotation). */
  forget(): void;
  /** Revokes a key (idempotent: a revoked key is returned unchanged). */
  revoke(keyId: string): Promise<KeyRecord>;
  /** The legacy settle: charges `amount` at once (recorded on `trace` when given); 402 `budget_exhausted` when it does not fit. */
  chargeDirect(key: KeyRecord, amount: bigint, trace?: RequestTrace): Promise<KeyRecord>;
}

/**
 * The rule of a service key acting for its wallet (as a bearer, or as its wallet's proof): on its
 * own chain only, least privilege. `what` names what is on `chainId`, `param` the field to blame.
 * @throws GatewayError 403 `forbidden` when `chainId` is another chain.
 */
export function assertKeyChain(key: Pick<KeyRecord, "chainId">, chainId: number, what: string, param: string): void {
  if (chainId !== key.chainId) throw new GatewayError("forbidden", `A service key acts for its wallet on its own chain (${key.chainId}) only; ${what} is on chain ${chainId}.`, { param });
}

/** Throws the 401 of a key that cannot be used at `now`. */
export function assertUsable(key: KeyRecord, now: number): void {
  if (key.revokedAt !== undefined) throw new GatewayError("key_revoked", `Key ${key.keyId} was revoked.`);
  if (key.expiresAt <= now) throw new GatewayError("key_expired", `Key ${key.keyId} expired at ${new Date(key.expiresAt).toISOString()}.`);
}

/** A rotated token authenticates until its grace ends, exactly: from that millisecond on, 401 `key_rotated`. */
function assertCurrentToken(key: KeyRecord, tokenHash: string, now: number): void {
  if (key.tokenHash !== tokenHash && (key.previousTokenValidUntil ?? 0) <= now)
    throw new GatewayError("key_rotated", `The token of key ${key.keyId} was rotated; its grace ended at ${new Date(key.previousTokenValidUntil ?? 0).toISOString()}. Use the new token.`);
}

/** The 402 of a key whose remaining budget is smaller than `amount`. */
export function budgetExhausted(key: KeyRecord, amount: bigint): GatewayError {
  return new GatewayError("budget_exhausted", `Key ${key.keyId} has ${remainingOf(key)} remaining; ${amount} is needed.`, {
    details: { keyId: key.keyId, budgetRemaining: remainingOf(key).toString(), required: amount.toString() },
    headers: budgetHeaders(key),
  });
}

/** The 402 of a per-model cap too small for `amount`. */
export function modelBudgetExhausted(key: KeyRecord, scope: string, amount: bigint): GatewayError {
  return new GatewayError("model_budget_exhausted", `Key ${key.keyId}'s budget for ${scope} cannot take ${amount} more.`, {
    details: { keyId: key.keyId, scope, limit: key.modelBudgets?.[scope]?.toString(), required: amount.toString() },
    headers: budgetHeaders(key),
  });
}

/**
 * Release on read for one key: when it holds a reservation, expires its overdue intents
 * ({@link Store.releaseOverdueIntents}) and returns it re-read, so an expired intent never shows
 * as reserved. A key without a reservation is returned as is (no write).
 */
export async function releaseOnRead(store: Store, key: KeyRecord, now: number): Promise<KeyRecord> {
  if (key.budgetReserved === 0n) return key;
  await store.releaseOverdueIntents([key.keyId], now);
  return (await store.getKeyById(key.keyId)) ?? key;
}

/** Most keys {@link KeyService.spender} keeps; the oldest entry makes room. */
const CACHE_SIZE = 10_000;

/**
 * Creates the key service over a store. `keyCacheMs` (default 1000, 0 = off) bounds how long
 * {@link KeyService.spender} serves a key from memory; `liveKeysPerWallet` (absent: no cap) is the
 * most live keys a wallet may hold (409 `too_many_keys` beyond).
 */
export function createKeyService(deps: {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  compat: "compose" | undefined;
  keyCacheMs?: number;
  telemetry?: Telemetry;
  liveKeysPerWallet?: number;
  /** Backs keys on settlement chains with the wallet's funds (absent: no check). */
  funding?: FundingGuard;
}): KeyService {
  const { store, clock, ids } = deps;
  const telemetry = deps.telemetry ?? noopTelemetry;
  const cacheMs = deps.keyCacheMs ?? 1_000;
  /** Token hash → key and until when it may be served; only live keys enter, at most CACHE_SIZE. */
  const cache = new Map<string, { key: KeyRecord; until: number }>();

  const identify = async (authorization: string | undefined): Promise<KeyRecord | null> => {
    const token = bearerToken(authorization);
    if (token === undefined) return null;
    const hash = looksLikeToken(token) ? hashToken(token) : undefined;
    const key = hash === undefined ? null : await store.getKeyByTokenHash(hash);
    if (!key) throw new GatewayError("invalid_key", "The service key is unknown or malformed.");
    assertCurrentToken(key, hash!, clock.now());
    return key;
  };

  const service: KeyService = {
    async create(input) {
      if (input.budgetLimit > store.maxAmount) throw invalidRequest(`budgetLimit must be at most ${store.maxAmount} with this store`, "budgetLimit");
      const now = clock.now();
      if (input.expiresAt <= now) throw invalidRequest("expiresAt must be in the future (Unix milliseconds)", "expiresAt");
      if (deps.funding && !deps.funding.settles(input.chainId))
        throw invalidRequest(
          `This gateway settles keys' charges on ${deps.funding.settledChains.length > 0 ? `chain ${deps.funding.settledChains.join(" and ")} only` : "no chain"}; chain ${input.chainId} has no settlement, so nothing would collect what a key there spends.`,
          "chainId",
        );
      const token = mintToken(deps.compat);
      const key: KeyRecord = {
        keyId: ids.next("key"),
        tokenHash: hashToken(token),
        owner: input.owner,
        chainId: input.chainId,
        purpose: input.purpose,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.rateLimit === undefined ? {} : { rateLimit: { requestsPerMinute: input.rateLimit.requestsPerMinute } }),
        ...(input.budgetPeriod === undefined ? {} : { budgetPeriod: input.budgetPeriod, periodStart: windowStart(input.budgetPeriod, now) }),
        ...(input.models === undefined ? {} : { models: [...input.models] }),
        ...(input.modelBudgets === undefined ? {} : { modelBudgets: { ...input.modelBudgets } }),
        budgetLimit: input.budgetLimit,
        budgetUsed: 0n,
        budgetReserved: 0n,
        createdAt: now,
        expiresAt: input.expiresAt,
      };
      const live = deps.liveKeysPerWallet === undefined ? {} : { liveLimit: deps.liveKeysPerWallet };
      const insert = () => store.insertKey(key, Object.assign({ supersedeSessionAt: now }, live));
      const change = async () => ({ remaining: key.budgetLimit, supersedesSessions: key.purpose === "session" });
      // Another process's write pushing the wallet over its funds at the same moment revokes this key before its token is ever shown.
      const undo = async () => void (await store.revokeKey(key.keyId, clock.now()));
      const { superseded } = await (deps.funding ? deps.funding.guard(key, change, insert, undo) : insert());
      return { key, token, superseded };
    },
    async list(owner, options) {
      const at = options.cursor ? decodeKeysetCursor(options.cursor) : undefined;
      const query = { limit: options.limit, ...(at ? { cursor: { createdAt: at.createdAt, keyId: at.id } } : {}), ...(options.chainId === undefined ? {} : { chainId: options.chainId }) };
      let page = await store.listKeys(owner, query);
      // Release on read; a release changes budgets only, so the same query returns the same keys.
      const held = page.keys.filter((k) => k.budgetReserved > 0n).map((k) => k.keyId);
      if (held.length > 0) {
        await store.releaseOverdueIntents(held, clock.now());
        page = await store.listKeys(owner, query);
      }
      return { keys: page.keys, nextCursor: page.nextCursor ? encodeKeysetCursor(page.nextCursor.createdAt, page.nextCursor.keyId) : null };
    },
    identify,
    async authenticate(authorization) {
      const key = await identify(authorization);
      if (!key) throw new GatewayError("authentication_required", `Send a service key as Authorization: Bearer ${tokenPrefix(deps.compat)}….`);
      assertUsable(key, clock.now());
      // A key made before settlement covered its chain (or before this check) spends nothing.
      if (deps.funding && !deps.funding.settles(key.chainId))
        throw new GatewayError("chain_mismatch", `Key ${key.keyId} is on chain ${key.chainId}, which this gateway does not settle (${deps.funding.settledChains.join(", ")}).`);
      return key;
    },
    async authorizeFor(authorization, targetKeyId) {
      const bearer = await identify(authorization);
      if (!bearer) throw new GatewayError("authentication_required", "Send the key itself or another active key of its owner as Authorization: Bearer.");
      const now = clock.now();
      // The status table (docs/api.md "Errors"): a revoked or expired bearer is a 401, even on itself.
      assertUsable(bearer, now);
      const target = bearer.keyId === targetKeyId ? bearer : await store.getKeyById(targetKeyId);
      if (!target) throw new GatewayError("key_not_found", `Key ${targetKeyId} does not exist.`);
      if (target.owner !== bearer.owner) throw new GatewayError("forbidden", "The bearer key belongs to another wallet than the target key.");
      assertKeyChain(bearer, target.chainId, `key ${target.keyId}`, "keyId");
      return releaseOnRead(store, target, now);
    },
    async activeSession(owner, chainId) {
      const now = clock.now();
      const key = await store.findActiveSessionKey(owner, chainId, now);
      return key ? releaseOnRead(store, key, now) : null;
    },
    async spender(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined || cacheMs <= 0) return service.authenticate(authorization);
      const hash = looksLikeToken(token) ? hashToken(token) : undefined;
      const now = clock.now();
      const hit = hash === undefined ? undefined : cache.get(hash);
      if (hit && hit.until > now) {
        assertUsable(hit.key, now);
        assertCurrentToken(hit.key, hash!, now);
        return hit.key;
      }
      const key = await service.authenticate(authorization);
      if (hash !== undefined) {
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(hash, { key, until: now + cacheMs });
      }
      return key;
    },
    forget: () => cache.clear(),
    async revoke(keyId) {
      cache.clear();
      const key = await store.revokeKey(keyId, clock.now());
      if (!key) throw new GatewayError("key_not_found", `Key ${keyId} does not exist.`);
      return key;
    },
    async chargeDirect(key, amount, trace) {
      const now = clock.now();
      const result = await store.chargeDirect({
        keyId: key.keyId,
        amount,
        now,
        charge: { chargeId: ids.next("ch"), keyId: key.keyId, owner: key.owner, chainId: key.chainId, amount, status: "queued", createdAt: now },
      });
      if (result.ok) {
        recordCharge(telemetry, trace, UNMETERED, amount, "direct");
        return result.key;
      }
      if (result.reason === "key_not_found") throw new GatewayError("invalid_key");
      if (result.reason === "budget_exhausted") {
        telemetry.budgetRefused("budget_exhausted");
        throw budgetExhausted(result.key, amount);
      }
      assertUsable(result.key, now);
      throw new GatewayError(result.reason);
    },
  };
  return service;
}
