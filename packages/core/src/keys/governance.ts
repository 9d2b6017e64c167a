/**
 * Key governance: which models a key may pay for, which per-model cap a call counts against,
 * key updates with their recorded events, and token rotation with a grace period.
 *
 * Model patterns: an exact catalog id (`gpt-4o`, `meta-llama/Llama-3.3-70B-Instruct-Turbo`) or
 * `<provider>/*` (every card of that provider slug). A per-model cap applies to the most specific
 * entry of `modelBudgets` that matches: the exact id, else the provider pattern.
 */
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../clock.js";
import { GatewayError, invalidRequest } from "../errors.js";
import type { IdGenerator } from "../ids.js";
import type { KeyEventRecord, KeyPatch, KeyRecord, Store } from "../store/types.js";
import { unspent, type FundingGuard } from "../settlement/funding.js";
import { isLiveKey } from "../store/key-limits.js";
import { rolled } from "./period.js";
import { scopeCommitted } from "./view.js";
import { hashToken, mintToken } from "./token.js";

/** A card as the model checks see it. */
export interface ModelRef {
  readonly modelId: string;
  readonly provider: string;
}

/** Default grace of a rotated token: one hour. */
export const DEFAULT_ROTATION_GRACE_MS = 3_600_000;
/** Longest grace a rotation may give the old token: seven days. */
export const MAX_ROTATION_GRACE_MS = 7 * 86_400_000;

const providerPattern = (p: string) => (p.endsWith("/*") ? p.slice(0, -2) : undefined);

/** Whether `pattern` (an exact id or `<provider>/*`) covers `card`. */
export function matchesModel(pattern: string, card: ModelRef): boolean {
  return pattern === card.modelId || providerPattern(pattern) === card.provider;
}

/** Throws 403 `model_not_allowed` when the key has an allow-list that does not cover `card`. */
export function assertModelAllowed(key: KeyRecord, card: ModelRef): void {
  if (key.models && !key.models.some((p) => matchesModel(p, card)))
    throw new GatewayError("model_not_allowed", `Key ${key.keyId} may not pay for ${card.provider}:${card.modelId} (allowed: ${key.models.join(", ")}).`, {
      param: "model",
      details: { keyId: key.keyId, model: card.modelId, provider: card.provider, allowed: key.models },
    });
}

/** The per-model cap a call on `card` counts against: the exact id's entry, else its provider's pattern. */
export function budgetScopeFor(key: KeyRecord, card: ModelRef): { scope: string; limit: bigint } | undefined {
  const caps = key.modelBudgets;
  if (!caps) return undefined;
  for (const scope of [card.modelId, `${card.provider}/*`]) {
    const limit = caps[scope];
    if (limit !== undefined) return { scope, limit };
  }
  return undefined;
}

/** Checks model patterns against the catalog: an unknown id or provider is a 400 naming `param`. */
export function checkModelPatterns(catalog: Catalog, patterns: readonly string[], param: string): void {
  const providers = new Set(catalog.providers());
  for (const p of patterns) {
    const provider = providerPattern(p);
    const known = provider === undefined ? catalog.find(p) !== undefined : providers.has(provider);
    if (!known) throw invalidRequest(`${param}: ${JSON.stringify(p)} is neither a catalog model id nor "<provider>/*" of a catalog provider`, param);
  }
}

/** Who changed a key: `wallet:<address>`, `key:<keyId>`, or `settlement:<runId>` (a batch that froze an underfunded wallet). */
export type Actor = `wallet:${string}` | `key:${string}` | `settlement:${string}`;

const wire = (v: unknown): unknown =>
  v === undefined ? null : typeof v === "bigint" ? v.toString() : v && typeof v === "object" ? JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x))) : v;

/** The `{from, to}` of each field `patch` changes on `key` (amounts as decimal strings). */
export function changesOf(key: KeyRecord, patch: KeyPatch): KeyEventRecord["changes"] {
  const out: KeyEventRecord["changes"] = {};
  for (const [field, to] of Object.entries(patch) as [keyof KeyPatch, unknown][]) {
    if (to === undefined) continue;
    const from = wire(key[field]);
    const next = wire(to);
    if (JSON.stringify(from) !== JSON.stringify(next)) out[field] = { from, to: next };
  }
  return out;
}

/** The governance service over the store. */
export function createKeyGovernance(deps: {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  compat: "compose" | undefined;
  onChange: () => void;
  funding?: FundingGuard;
  /** The cap of a wallet's live keys that reviving an expired key must respect too (absent: none). */
  liveKeysPerWallet?: number;
}) {
  const { store, clock, ids } = deps;
  const event = (keyId: string, type: KeyEventRecord["type"], actor: Actor, changes: KeyEventRecord["changes"]): KeyEventRecord => ({
    eventId: ids.next("kev"),
    keyId,
    at: clock.now(),
    type,
    actor,
    changes,
  });

  /**
   * A lowered per-model cap must still cover what its scope has used and holds reserved in this
   * window, as `budgetLimit` must (409 `limit_below_committed`). Read before the write: a
   * reservation racing the patch can still pass it, which the reserve guard then simply stops.
   */
  async function assertCapsCover(key: KeyRecord, caps: Record<string, bigint>, now: number): Promise<void> {
    const spend = await store.getModelSpend(key.keyId);
    for (const [scope, limit] of Object.entries(caps)) {
      const { used, reserved } = scopeCommitted(key, now, spend, scope);
      if (limit < used + reserved)
        throw new GatewayError("limit_below_committed", `modelBudgets.${scope} ${limit} is below what its scope has used and reserved in this window (${used + reserved}).`, {
          param: "modelBudgets",
          details: { scope, budgetUsed: used.toString(), budgetReserved: reserved.toString() },
        });
    }
  }

  return {
    /**
     * Applies `patch` to `key` and records who changed what. Refuses a past `expiresAt` (400), a
     * revival of an expired session key (400), a revival past the wallet's live-key cap (409
     * `too_many_keys`) and a `budgetLimit` below the current window's used + reserved (409 `limit_below_committed`).
     * A patch that changes nothing records nothing and returns the key. A patch that lets the key
     * spend more (a higher limit, a fresh period window, an expired key revived) on a settlement
     * chain needs the wallet's funds to cover it: 402 `insufficient_funds` (see `FundingGuard`).
     */
    async update(key: KeyRecord, patch: KeyPatch, actor: Actor): Promise<KeyRecord> {
      const now = clock.now();
      if (patch.expiresAt !== undefined && patch.expiresAt <= now) throw invalidRequest("expiresAt must be in the future (Unix milliseconds)", "expiresAt");
      if (patch.budgetLimit !== undefined && patch.budgetLimit > store.maxAmount) throw invalidRequest(`budgetLimit must be at most ${store.maxAmount} with this store`, "budgetLimit");
      const changes = changesOf(key, patch);
      if (Object.keys(changes).length === 0) return key;
      // A wallet holds one active session key per chain, superseded by each new sign-in: an expired one stays expired.
      if (key.purpose === "session" && patch.expiresAt !== undefined && key.expiresAt <= now && key.revokedAt === undefined)
        throw invalidRequest("an expired session key cannot be revived: sign in again for a new one", "expiresAt");
      if (patch.modelBudgets) await assertCapsCover(key, patch.modelBudgets, now);
      const live = deps.liveKeysPerWallet === undefined ? {} : { liveLimit: deps.liveKeysPerWallet };
      const write = async (): Promise<KeyRecord> => {
        const result = await store.updateKey(Object.assign({ keyId: key.keyId, patch, now, event: event(key.keyId, "update", actor, changes) }, live));
        if (result.ok) return result.key;
        if (result.reason === "not_found") throw new GatewayError("key_not_found", `Key ${key.keyId} does not exist.`);
        const committed = result.key.budgetUsed + result.key.budgetReserved;
        throw new GatewayError("limit_below_committed", `budgetLimit ${patch.budgetLimit} is below what the key has used and reserved in this window (${committed}).`, {
          param: "budgetLimit",
          details: { budgetUsed: result.key.budgetUsed.toString(), budgetReserved: result.key.budgetReserved.toString() },
        });
      };
      // A change to the budget, its window or the expiry is judged inside the wallet's funding turn,
      // from the key as stored then: two concurrent changes cannot both count on the same state.
      const budgetChange = patch.budgetLimit !== undefined || patch.budgetPeriod !== undefined || patch.expiresAt !== undefined;
      let prior = key;
      const change = async () => {
        prior = (await store.getKeyById(key.keyId)) ?? key;
        const remaining = raisedBy(prior, patch, clock.now());
        const param = patch.budgetLimit !== undefined ? "budgetLimit" : patch.budgetPeriod !== undefined ? "budgetPeriod" : "expiresAt";
        return remaining === undefined ? undefined : { remaining, replacing: key.keyId, param };
      };
      const undo = () => takeBack({ store, clock, record: (current, back) => event(key.keyId, "update", actor, changesOf(current, back)) }, key.keyId, prior, patch);
      try {
        return await (budgetChange && deps.funding?.checks(key.chainId) ? deps.funding.guard(key, change, write, undo) : write());
      } finally {
        // A change taken back was still a change: the spender cache forgets the key either way.
        deps.onChange();
      }
    },

    /** Issues a new token for the key; the old one authenticates for `graceMs` more, then answers 401 `key_rotated`. */
    async rotate(key: KeyRecord, graceMs: number, actor: Actor): Promise<{ key: KeyRecord; token: string }> {
      const token = mintToken(deps.compat);
      const validUntil = clock.now() + graceMs;
      const rotated = await store.rotateKey({
        keyId: key.keyId,
        tokenHash: hashToken(token),
        previousValidUntil: validUntil,
        event: event(key.keyId, "rotate", actor, { previousTokenValidUntil: { from: wire(key.previousTokenValidUntil), to: validUntil } }),
      });
      deps.onChange();
      if (!rotated) throw new GatewayError("key_not_found", `Key ${key.keyId} does not exist.`);
      return { key: rotated, token };
    },

    /** A newest-first page of the key's events; `cursor` is a previous page's `nextCursor`. */
    async events(keyId: string, limit: number, cursor: string | undefined) {
      const at = cursor ? decodeEventCursor(cursor) : undefined;
      const page = await store.listKeyEvents(keyId, { limit, ...(at ? { cursor: at } : {}) });
      return { events: page.events, nextCursor: page.nextCursor ? `${page.nextCursor.at}.${page.nextCursor.eventId}` : null };
    },
  };
}

/**
 * What `key` may spend after `patch` when that is more than it may spend now, else undefined: a
 * higher limit, a new period (a fresh window: used 0), or an expiry moved from the past to the future.
 */
function raisedBy(stored: KeyRecord, patch: KeyPatch, now: number): bigint | undefined {
  const key = rolled(stored, now);
  const live = (expiresAt: number) => isLiveKey({ revokedAt: key.revokedAt, expiresAt }, now);
  const freshWindow = patch.budgetPeriod != null && patch.budgetPeriod !== key.budgetPeriod;
  const before = live(key.expiresAt) ? unspent(key) : 0n;
  const after = live(patch.expiresAt ?? key.expiresAt) ? unspent({ budgetLimit: patch.budgetLimit ?? key.budgetLimit, budgetUsed: freshWindow ? 0n : key.budgetUsed }) : 0n;
  return after > before ? after : undefined;
}

/** Most attempts of {@link takeBack}; each miss means a reserve took part of the key's budget meanwhile. */
const TAKE_BACK_ATTEMPTS = 20;

/**
 * Takes back a change of a key that another process's write pushed over the wallet's funds at the
 * same moment (the funding guard's `undo`): its limit goes back to what it was before (never below
 * what it has used and reserved since), its expiry to the earlier of the two; a change of period
 * started a fresh window that cannot be restored, so then the key is cut to what it committed,
 * without a period. Throws when reserves kept racing it (the operator's log gets the 500).
 */
async function takeBack(
  deps: { store: Store; clock: Clock; record: (current: KeyRecord, back: KeyPatch) => KeyEventRecord },
  keyId: string,
  prior: KeyRecord,
  patch: KeyPatch,
): Promise<void> {
  const freshWindow = patch.budgetPeriod !== undefined && patch.budgetPeriod !== prior.budgetPeriod;
  for (let attempt = 0; attempt < TAKE_BACK_ATTEMPTS; attempt++) {
    const current = await deps.store.getKeyById(keyId);
    if (!current) return;
    const at = deps.clock.now();
    const now = rolled(current, at);
    const committed = now.budgetUsed + now.budgetReserved;
    const earlier = current.budgetLimit < prior.budgetLimit ? current.budgetLimit : prior.budgetLimit;
    const back: KeyPatch = freshWindow
      ? { budgetLimit: committed, budgetPeriod: null, expiresAt: Math.min(current.expiresAt, prior.expiresAt) }
      : { budgetLimit: earlier > committed ? earlier : committed, expiresAt: Math.min(current.expiresAt, prior.expiresAt) };
    const undone = await deps.store.updateKey({ keyId, patch: back, now: at, event: deps.record(current, back) });
    if (undone.ok || undone.reason === "not_found") return;
  }
  throw new Error(`could not take back the change of key ${keyId}: reserves kept racing it (${TAKE_BACK_ATTEMPTS} attempts)`);
}

function decodeEventCursor(cursor: string): { at: number; eventId: string } {
  const m = /^(\d{1,16})\.(kev_[A-Za-z0-9]{1,64})$/.exec(cursor);
  if (!m) throw invalidRequest("cursor is not one this API returned", "cursor");
  return { at: Number(m[1]), eventId: m[2]! };
}

/** The governance service type. */
export type KeyGovernance = ReturnType<typeof createKeyGovernance>;
