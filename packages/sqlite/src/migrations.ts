/**
 * Versioned schema migrations. Applied versions are recorded in `schema_migrations(version,
 * applied_at)`; each migration runs once, inside its own `BEGIN IMMEDIATE` transaction that
 * re-checks the table, so several processes opening one new file at once apply it exactly once.
 * Append new migrations at the end; never edit an applied one.
 */
import type Database from "better-sqlite3";
import { VIDEO_MIGRATIONS } from "./video.js";
import { FEEDBACK_MIGRATIONS } from "./feedback.js";
import { AGENTS_MIGRATIONS } from "./agents.js";
import { DISPENSER_MIGRATIONS } from "./dispenser.js";
import { X402_MIGRATIONS } from "./x402.js";
import { TRANSCRIPT_REST_MIGRATIONS } from "./transcript-rests.js";
import { AUTH_MIGRATIONS } from "./auth.js";
import { GOVERNANCE_MIGRATIONS } from "./governance.js";
import { USAGE_MIGRATIONS } from "./usage.js";
import { CHARGE_MIGRATIONS } from "./charges.js";

/** One schema step. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The ledger schema (keys, intents, charges). Later capabilities add theirs beside their ops. */
const LEDGER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "keys, intents, charges",
    // STRICT tables: an INTEGER column never silently holds text or a float. The CHECKs restate
    // money invariant 1 (docs/architecture.md), so even a faulty statement cannot break it.
    sql: `
      CREATE TABLE keys (
        key_id          TEXT PRIMARY KEY,
        token_hash      TEXT NOT NULL UNIQUE,
        owner           TEXT NOT NULL,
        chain_id        INTEGER NOT NULL,
        purpose         TEXT NOT NULL CHECK (purpose IN ('session', 'api')),
        name            TEXT,
        budget_limit    INTEGER NOT NULL CHECK (budget_limit >= 0),
        budget_used     INTEGER NOT NULL CHECK (budget_used >= 0),
        budget_reserved INTEGER NOT NULL CHECK (budget_reserved >= 0),
        created_at      INTEGER NOT NULL,
        expires_at      INTEGER NOT NULL,
        revoked_at      INTEGER,
        last_used_at    INTEGER,
        CHECK (budget_used <= budget_limit - budget_reserved)
      ) STRICT;
      CREATE INDEX keys_by_owner ON keys (owner, created_at DESC, key_id DESC);
      CREATE INDEX keys_active_session ON keys (owner, chain_id) WHERE purpose = 'session' AND revoked_at IS NULL;

      CREATE TABLE intents (
        intent_id       TEXT PRIMARY KEY,
        key_id          TEXT NOT NULL REFERENCES keys (key_id),
        owner           TEXT NOT NULL,
        chain_id        INTEGER NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('authorized', 'settled', 'aborted', 'expired')),
        max_amount      INTEGER NOT NULL CHECK (max_amount >= 0),
        final_amount    INTEGER CHECK (final_amount >= 0 AND final_amount <= max_amount),
        released_amount INTEGER CHECK (released_amount >= 0 AND released_amount <= max_amount),
        idempotency_key TEXT,
        fingerprint     TEXT NOT NULL,
        request         TEXT NOT NULL,
        result          TEXT,
        reason          TEXT,
        created_at      INTEGER NOT NULL,
        expires_at      INTEGER NOT NULL,
        finished_at     INTEGER
      ) STRICT;
      CREATE UNIQUE INDEX intents_idempotency ON intents (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX intents_due ON intents (expires_at, intent_id) WHERE status = 'authorized';
      CREATE INDEX intents_due_by_key ON intents (key_id, expires_at) WHERE status = 'authorized';

      CREATE TABLE charges (
        charge_id   TEXT PRIMARY KEY,
        intent_id   TEXT REFERENCES intents (intent_id),
        key_id      TEXT NOT NULL REFERENCES keys (key_id),
        owner       TEXT NOT NULL,
        chain_id    INTEGER NOT NULL,
        amount      INTEGER NOT NULL CHECK (amount >= 0),
        status      TEXT NOT NULL CHECK (status IN ('queued', 'settled', 'failed')),
        created_at  INTEGER NOT NULL,
        tx_hash     TEXT,
        error       TEXT,
        batch_id    TEXT,
        lease_until INTEGER,
        settled_at  INTEGER
      ) STRICT;
      CREATE INDEX charges_queued ON charges (created_at, charge_id) WHERE status = 'queued';
      CREATE INDEX charges_pending ON charges (owner, chain_id) WHERE status = 'queued';
    `,
  },
  {
    version: 7,
    name: "intents by owner (listIntents)",
    sql: "CREATE INDEX intents_by_owner ON intents (owner, created_at DESC, intent_id DESC);",
  },
  {
    version: 8,
    name: "keys: own rate limit",
    // NULL: the key has no own limit (the gateway default applies). Range checks are the caller's.
    sql: "ALTER TABLE keys ADD COLUMN rate_limit_rpm INTEGER;",
  },
  {
    version: 13,
    name: "keys: open intents count",
    // The counter of the open-intent cap (ledger.ts: every step that moves an intent into or out of
    // `authorized` moves it), counted once here for the intents already open.
    sql: `
      ALTER TABLE keys ADD COLUMN open_intents INTEGER NOT NULL DEFAULT 0 CHECK (open_intents >= 0);
      UPDATE keys SET open_intents = (SELECT count(*) FROM intents i WHERE i.key_id = keys.key_id AND i.status = 'authorized')
        WHERE key_id IN (SELECT key_id FROM intents WHERE status = 'authorized');
    `,
  },
  {
    version: 14,
    name: "keys: live keys by owner",
    // The count of a wallet's live keys for the cap `liveLimit` (keys.ts): only its unrevoked keys,
    // by expiry, so the count never reads the revoked or expired keys a wallet piles up.
    sql: "CREATE INDEX keys_live_by_owner ON keys (owner, expires_at) WHERE revoked_at IS NULL;",
  },
  {
    version: 16,
    name: "keys: revoked keys by owner",
    // With keys_live_by_owner, the keys that may still hold a reservation (usage.ts HELD_SQL): the
    // unrevoked ones by expiry and these by revocation, so the usage read never walks the keys a
    // wallet revoked long ago (a session key is revoked each time a new one supersedes it).
    sql: "CREATE INDEX keys_revoked_by_owner ON keys (owner, revoked_at) WHERE revoked_at IS NOT NULL;",
  },
];

/**
 * Every migration, in version order. Versions: 1 ledger, 2 video, 3 feedback, 4 agents,
 * 5 dispenser, 6 x402 nonces, 7 intents by owner, 8 key rate limit, 9 auth nonces and sessions,
 * 10 feedback context and metadata, 11 key governance, 12 charges by owner (usage), 13 keys' open
 * intents count, 14 live keys by owner, 15 usage rollups per day, 16 revoked keys by owner, 17 session signers, 18 x402 claim amounts, 19 charges' unfinished transfers, 20 dispenser claims' unfinished transfers, 21 feedback's counted ratings, 22 unsure x402 claims, 23 transcription rests; each capability
 * keeps its own next to its operations.
 */
export const MIGRATIONS: readonly Migration[] = [
  ...LEDGER_MIGRATIONS,
  ...VIDEO_MIGRATIONS,
  ...FEEDBACK_MIGRATIONS,
  ...AGENTS_MIGRATIONS,
  ...DISPENSER_MIGRATIONS,
  ...X402_MIGRATIONS,
  ...TRANSCRIPT_REST_MIGRATIONS,
  ...AUTH_MIGRATIONS,
  ...GOVERNANCE_MIGRATIONS,
  ...USAGE_MIGRATIONS,
  ...CHARGE_MIGRATIONS,
].sort((a, b) => a.version - b.version);

/**
 * Applies every migration of `migrations` not yet recorded, in version order.
 * @returns the versions it applied.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT");
  const isApplied = db.prepare<[number], { version: bigint }>("SELECT version FROM schema_migrations WHERE version = ?");
  const record = db.prepare<[number, number]>("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
  const applied: number[] = [];
  const applyOne = db.transaction((m: Migration) => {
    if (isApplied.get(m.version)) return;
    db.exec(m.sql);
    record.run(m.version, Date.now());
    applied.push(m.version);
  });
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) applyOne.immediate(m);
  return applied;
}
