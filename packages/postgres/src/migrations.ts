/**
 * Versioned schema migrations. Applied versions are recorded in `schema_migrations(version, name,
 * applied_at)` of the target schema. Each migration runs in its own transaction that first takes a
 * transaction-level advisory lock on the schema and re-checks the table, so several instances
 * starting together apply each version exactly once. A migration's SQL names tables unqualified:
 * it runs with `search_path` set to the target schema for its transaction only.
 * Append new migrations at the end; never edit an applied one.
 */
import { AGENTS_MIGRATIONS } from "./agents.js";
import { AUTH_MIGRATIONS } from "./auth.js";
import { DISPENSER_MIGRATIONS } from "./dispenser.js";
import { FEEDBACK_MIGRATIONS } from "./feedback.js";
import { GOVERNANCE_MIGRATIONS } from "./governance.js";
import { inTransaction, type Queryable } from "./queryable.js";
import { quoteIdent, tablesIn } from "./rows.js";
import { USAGE_MIGRATIONS } from "./usage.js";
import { CHARGE_MIGRATIONS } from "./charges.js";
import { VIDEO_MIGRATIONS } from "./video.js";
import { X402_MIGRATIONS } from "./x402.js";
import { TRANSCRIPT_REST_MIGRATIONS } from "./transcript-rests.js";

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
    // Ids sort bytewise (COLLATE "C"), as the other stores compare them. The CHECKs restate
    // money invariant 1 (docs/architecture.md), so even a faulty statement cannot break it.
    // `current_session` marks the newest session key of an (owner, chain); its unique index is
    // what serializes concurrent session-key inserts (see keys.ts).
    sql: `
      CREATE TABLE keys (
        key_id          text COLLATE "C" PRIMARY KEY,
        token_hash      text NOT NULL UNIQUE,
        owner           text NOT NULL,
        chain_id        bigint NOT NULL,
        purpose         text NOT NULL CHECK (purpose IN ('session', 'api')),
        name            text,
        budget_limit    numeric(78, 0) NOT NULL CHECK (budget_limit >= 0),
        budget_used     numeric(78, 0) NOT NULL CHECK (budget_used >= 0),
        budget_reserved numeric(78, 0) NOT NULL CHECK (budget_reserved >= 0),
        created_at      bigint NOT NULL,
        expires_at      bigint NOT NULL,
        revoked_at      bigint,
        last_used_at    bigint,
        current_session boolean,
        CONSTRAINT keys_budget CHECK (budget_used + budget_reserved <= budget_limit),
        CONSTRAINT keys_current_is_session CHECK (current_session IS NULL OR (current_session AND purpose = 'session'))
      );
      CREATE INDEX keys_by_owner ON keys (owner, created_at DESC, key_id DESC);
      CREATE INDEX keys_active_session ON keys (owner, chain_id) WHERE purpose = 'session' AND revoked_at IS NULL;
      CREATE UNIQUE INDEX keys_current_session ON keys (owner, chain_id) WHERE current_session;

      CREATE TABLE intents (
        intent_id       text COLLATE "C" PRIMARY KEY,
        key_id          text COLLATE "C" NOT NULL REFERENCES keys (key_id),
        owner           text NOT NULL,
        chain_id        bigint NOT NULL,
        status          text NOT NULL CHECK (status IN ('authorized', 'settled', 'aborted', 'expired')),
        max_amount      numeric(78, 0) NOT NULL CHECK (max_amount >= 0),
        final_amount    numeric(78, 0) CHECK (final_amount >= 0 AND final_amount <= max_amount),
        released_amount numeric(78, 0) CHECK (released_amount >= 0 AND released_amount <= max_amount),
        idempotency_key text,
        fingerprint     text NOT NULL,
        request         json NOT NULL,
        result          json,
        reason          text,
        created_at      bigint NOT NULL,
        expires_at      bigint NOT NULL,
        finished_at     bigint
      );
      CREATE UNIQUE INDEX intents_idempotency ON intents (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX intents_due ON intents (expires_at, intent_id) WHERE status = 'authorized';
      CREATE INDEX intents_due_by_key ON intents (key_id, expires_at, intent_id) WHERE status = 'authorized';

      CREATE TABLE charges (
        charge_id   text COLLATE "C" PRIMARY KEY,
        intent_id   text COLLATE "C" REFERENCES intents (intent_id),
        key_id      text COLLATE "C" NOT NULL REFERENCES keys (key_id),
        owner       text NOT NULL,
        chain_id    bigint NOT NULL,
        amount      numeric(78, 0) NOT NULL CHECK (amount >= 0),
        status      text NOT NULL CHECK (status IN ('queued', 'settled', 'failed')),
        created_at  bigint NOT NULL,
        tx_hash     text,
        error       text,
        batch_id    text,
        lease_until bigint,
        settled_at  bigint
      );
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
    sql: "ALTER TABLE keys ADD COLUMN rate_limit_rpm integer;",
  },
  {
    version: 13,
    name: "keys: open intents count",
    // The number of the key's authorized intents, moved by every ledger statement that moves an
    // intent into or out of `authorized` (ledger-sql.ts), for a reserve's `openLimit`. Both tables
    // are locked first, intents before keys as every ledger statement takes them (SHARE: writers
    // in flight finish, no new one starts), so the backfill counts intents no statement is moving.
    sql: `
      LOCK TABLE intents IN SHARE MODE;
      ALTER TABLE keys ADD COLUMN open_intents integer NOT NULL DEFAULT 0 CONSTRAINT keys_open_intents CHECK (open_intents >= 0);
      UPDATE keys k SET open_intents = o.n
      FROM (SELECT key_id, count(*) AS n FROM intents WHERE status = 'authorized' GROUP BY key_id) o
      WHERE k.key_id = o.key_id;
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
    // With keys_live_by_owner, the keys that may still hold a reservation (usage.ts `held_keys`):
    // the unrevoked ones by expiry and these by revocation, so the usage read never walks the keys
    // a wallet revoked long ago (a session key is revoked each time a new one supersedes it).
    sql: "CREATE INDEX keys_revoked_by_owner ON keys (owner, revoked_at) WHERE revoked_at IS NOT NULL;",
  },
];

/**
 * Every migration, in version order. Versions: 1 ledger, 2 video, 3 feedback, 4 agents,
 * 5 dispenser, 6 x402 nonces, 7 intents by owner, 8 key rate limit, 9 auth nonces and sessions,
 * 10 feedback context and metadata, 11 key governance, 12 charges by owner (usage), 13 keys' open
 * intents count, 14 live keys by owner, 15 usage rollups per day, 16 revoked keys by owner, 17 session signers, 18 x402 claim amounts, 19 charges' unfinished transfers, 20 dispenser claims' unfinished transfers, 21 feedback's counted ratings, 22 unsure x402 claims, 23 transcription rests (the same numbers as
 * `@tollgate/sqlite`).
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

/** The advisory lock class of migrations ("toll"); the schema name's hash is the other half. */
const LOCK_CLASS = 0x746f6c6c;

/**
 * Applies every migration of `migrations` not yet recorded in `options.schema` (created if
 * missing; @default "public"), in version order, each in its own transaction. Concurrent callers
 * (other processes, other pools) serialize on an advisory lock, so each version is applied once.
 * Pass a `pg.Pool` (one client is checked out for the transactions), a `pg.Client` that nothing
 * else uses meanwhile, or the PGlite adapter.
 * @returns the versions it applied (empty when the schema was up to date).
 * @throws the database error of a failing migration; that version is rolled back, earlier ones stay.
 */
export async function migrate(db: Queryable, options: { schema?: string } = {}, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const schema = options.schema ?? "public";
  if (typeof schema !== "string" || schema.length === 0) throw new TypeError("migrate: `schema` must be a non-empty string");
  const table = tablesIn(schema)("schema_migrations");
  // A migration waits as long as it must for its locks (another instance migrating, a busy table),
  // whatever lock_timeout the role or the connection sets.
  const lock = (tx: Queryable) =>
    tx.query("SELECT set_config('lock_timeout', '0', true), pg_advisory_xact_lock($1::int, hashtext($2::text))", [LOCK_CLASS, schema]);

  const done = await inTransaction(db, async (tx) => {
    await lock(tx);
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when it exists.
    const { rows: exists } = await tx.query("SELECT 1 FROM pg_namespace WHERE nspname = $1::text", [schema]);
    if (exists.length === 0) await tx.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    const { rows } = await tx.query<{ version: string }>(`SELECT version::text AS version FROM ${table}`);
    return new Set(rows.map((r) => Number(r.version)));
  });

  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue;
    const ran = await inTransaction(db, async (tx) => {
      await lock(tx);
      const { rows } = await tx.query(`SELECT 1 FROM ${table} WHERE version = $1::int`, [m.version]);
      if (rows.length > 0) return false;
      await tx.query("SELECT set_config('search_path', $1::text, true)", [quoteIdent(schema)]);
      await tx.query(m.sql);
      await tx.query(`INSERT INTO ${table} (version, name, applied_at) VALUES ($1::int, $2::text, $3::bigint)`, [m.version, m.name, Date.now()]);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}
