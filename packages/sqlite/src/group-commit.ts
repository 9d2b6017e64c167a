/**
 * Group commit: the ledger writes issued in one event-loop turn share one `BEGIN IMMEDIATE`
 * transaction. Each write is still its own guarded step; a write that throws (a duplicate charge
 * id, a CHECK) rejects only its own caller, and the others commit. Every caller is answered only after the COMMIT returned, so an answer
 * never reports a write that a crash could still lose (with `synchronous=NORMAL` a killed process
 * loses nothing committed).
 *
 * The common case pays no savepoint: the group runs as one plain transaction, and only when a
 * step throws is it rolled back and every step re-run alone.
 *
 * Why: one commit of a WAL database writes every page it dirtied once. Thirty-two reserves of one
 * turn each alone write the key's page, the intents' leaf pages and their index pages 32 times;
 * grouped, once. Across processes nothing changes: the batch holds the write lock for its whole
 * transaction, exactly as one write did.
 */
import type { GroupCommitStats } from "@tollgate/core";
import type Database from "better-sqlite3";

interface Pending {
  readonly step: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Queues guarded write steps and commits those of one turn together. */
export interface GroupCommit {
  /**
   * Runs `step` inside the next group transaction; resolves with its value after the COMMIT, or
   * rejects with what it threw (none of its writes kept). `step` must be synchronous and act only
   * on the database (it may run twice: see above).
   */
  run<T>(step: () => T): Promise<T>;
  /** Commits what is queued now (close calls it before closing the connection). */
  flush(): void;
  /** Counters since creation (live). SQLite reports no deadlocks: its writers queue for one lock. */
  readonly stats: GroupCommitStats;
}

/** Creates the group commit of a connection. `maxGroup` bounds one transaction's size. */
export function createGroupCommit(db: Database.Database, maxGroup = 256): GroupCommit {
  let queue: Pending[] = [];
  let scheduled = false;
  const stats = { groups: 0, grouped: 0, retried: 0, deadlocks: 0 };

  const single = db.transaction((step: () => unknown) => step());
  /** Every step in one transaction; the first throw rolls the whole group back and is rethrown. */
  const together = db.transaction((steps: readonly Pending[]) => steps.map((p) => p.step()));

  function alone(p: Pending): void {
    try {
      p.resolve(single.immediate(p.step));
    } catch (error) {
      p.reject(error);
    }
  }

  function commit(steps: readonly Pending[]): void {
    if (steps.length === 1) return alone(steps[0]!);
    let values: unknown[];
    try {
      values = together.immediate(steps);
      stats.groups++;
      stats.grouped += steps.length;
    } catch {
      stats.retried++;
      // Some step threw (or BEGIN/COMMIT failed): nothing of the group was written. Each step is
      // re-run in its own transaction, so only the failing one fails. Steps are pure functions of
      // the database (no effect outside it), so running one again after the rollback is safe.
      for (const p of steps) alone(p);
      return;
    }
    for (let i = 0; i < steps.length; i++) steps[i]!.resolve(values[i]);
  }
  function flush(): void {
    scheduled = false;
    while (queue.length > 0) {
      const steps = queue.length <= maxGroup ? queue : queue.slice(0, maxGroup);
      queue = queue.length <= maxGroup ? [] : queue.slice(maxGroup);
      commit(steps);
    }
  }

  return {
    run<T>(step: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ step, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    flush,
    stats,
  };
}
