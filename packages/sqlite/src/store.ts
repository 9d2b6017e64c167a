/** `createSqliteStore`: the embedded default Store, on better-sqlite3. */
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { createFeedbackOps } from "./feedback.js";
import { createAgentOps } from "./agents.js";
import { createDispenserOps } from "./dispenser.js";
import { createVideoOps } from "./video.js";
import { createPaymentNonceOps } from "./x402.js";
import { createTranscriptRestOps } from "./transcript-rests.js";
import { createAuthOps } from "./auth.js";
import { createUsageOps } from "./usage.js";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Store } from "@tollgate/core";
import { createChargeOps } from "./charges.js";
import { createKeyOps } from "./keys.js";
import { createGovernanceOps } from "./governance.js";
import { createLedgerOps } from "./ledger.js";
import { createGroupCommit } from "./group-commit.js";
import { startCheckpointer } from "./checkpointer.js";
import { migrate } from "./migrations.js";
import { createHealthOps } from "./health.js";
import { MAX_INT64 } from "./rows.js";

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * Path of the database file; its parent directory is created if missing. A new file is created
   * with mode 0600 (owner read/write only: it holds key hashes and session hashes), and SQLite
   * gives its `-wal` and `-shm` files the same mode; an existing file keeps its mode (chmod it
   * yourself). `":memory:"` for a private in-memory database.
   */
  filename: string;
  /**
   * `"normal"`: WAL with `synchronous=NORMAL` — a killed process loses nothing committed; a power
   * loss may lose the last transactions. `"full"`: `synchronous=FULL`, an fsync on every commit
   * (about 10× slower writes).
   * @default "normal"
   */
  durability?: "normal" | "full";
  /**
   * How often a worker thread checkpoints the WAL into the database file, in ms. While it runs,
   * the serving connection never checkpoints on COMMIT, so no request waits for the copy and its
   * fsync. 0: SQLite's default instead (a COMMIT checkpoints once the WAL passes 1000 pages).
   * Not used for `":memory:"` and `file:` URIs.
   * @default 250
   */
  checkpointIntervalMs?: number;
}

/**
 * Opens (and migrates) a SQLite {@link Store}: WAL journal, `busy_timeout=5000` ms, foreign keys
 * on. Several processes may open the same file; every guarded operation runs in a
 * `BEGIN IMMEDIATE` transaction, so they serialize on the write lock. Amounts are exact up to
 * 2^63-1 (`store.maxAmount`); see rows.ts for why. A database file it creates is private to its
 * owner (mode 0600, see {@link SqliteStoreOptions.filename}); an existing file's mode is not changed.
 * @throws TypeError on invalid options; better-sqlite3's error if the file cannot be opened.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const { filename, durability = "normal", checkpointIntervalMs = 250 } = options ?? ({} as SqliteStoreOptions);
  if (typeof filename !== "string" || filename.length === 0) throw new TypeError("createSqliteStore: `filename` must be a non-empty string");
  if (durability !== "normal" && durability !== "full") throw new TypeError('createSqliteStore: `durability` must be "normal" or "full"');
  if (!Number.isInteger(checkpointIntervalMs) || checkpointIntervalMs < 0)
    throw new TypeError("createSqliteStore: `checkpointIntervalMs` must be an integer >= 0");
  const onDisk = filename !== ":memory:" && !filename.startsWith("file:");
  if (onDisk) {
    mkdirSync(dirname(filename), { recursive: true });
    // Created here, before SQLite would create it with the umask's mode (often world-readable).
    // "a" never truncates, so a file another process created meanwhile is left as it is.
    if (!existsSync(filename)) closeSync(openSync(filename, "a", 0o600));
  }

  const db = new Database(filename, { timeout: 5000 });
  try {
    db.defaultSafeIntegers(true);
    // busy_timeout first: switching to WAL needs a lock another process may briefly hold.
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = ON");
    // When a writer starts the log over, it cuts the file back to this size (64 MiB).
    db.pragma("journal_size_limit = 67108864");
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }

  const group = createGroupCommit(db);
  const checkpointer =
    onDisk && checkpointIntervalMs > 0 ? startCheckpointer(db, filename, checkpointIntervalMs, durability === "full" ? "FULL" : "NORMAL") : undefined;
  return {
    maxAmount: MAX_INT64,
    ...createKeyOps(db),
    ...createGovernanceOps(db, group),
    ...createLedgerOps(db, group),
    ...createChargeOps(db),
    ...createFeedbackOps(db),
    ...createAgentOps(db),
    ...createDispenserOps(db),
    ...createVideoOps(db),
    ...createPaymentNonceOps(db),
    ...createTranscriptRestOps(db),
    ...createAuthOps(db),
    ...createUsageOps(db),
    ...createHealthOps(db, checkpointer && ((now) => checkpointer.countOpenIntents(now))),
    groupCommitStats: () => ({ ...group.stats }),
    async close() {
      if (!db.open) return;
      group.flush();
      await checkpointer?.close();
      if (db.open) db.close();
    },
  };
}
