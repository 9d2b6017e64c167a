/**
 * WAL checkpoints off the serving thread. SQLite's default checkpoints on COMMIT once the WAL
 * passes 1000 pages: that commit copies the pages into the database file and fsyncs it on the
 * event loop, stalling every request behind it (the p99). Here a worker thread with its own
 * connection runs `wal_checkpoint(PASSIVE)` on a timer (a checkpoint never blocks writers, and
 * skips frames a reader still needs) and the serving connection turns its own auto-checkpoint off
 * while the worker runs. If the worker cannot start or dies, the serving connection's
 * auto-checkpoint is turned back on. Once a passive pass leaves a long log, the worker restarts it
 * (see WORKER_SOURCE), so the WAL stays bounded under writes that never pause.
 *
 * The worker's connection also answers the one read whose cost grows with every wallet's open
 * reservations together, the count of open intents for `/metrics` (tens of ms at a million), so a
 * scrape never stalls the serving thread with it.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import { OPEN_INTENTS_SQL } from "./health.js";

// An eval worker (CommonJS): no file to locate after bundling, and no TypeScript loader needed.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { timeout: 5000 });
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = " + workerData.synchronous);
const pause = new Int32Array(new SharedArrayBuffer(4));
// Under steady writes a passive pass never sees the whole log copied, so no writer ever starts the
// log over and the file (and the index every read searches) grows without end. So once the log is
// long, copy the few frames appended meanwhile with the write lock held (RESTART); the next writer
// then starts the log over. The lock is taken between two commits of the serving thread: tried
// without waiting, again every 0.2 ms, for at most 50 ms (SQLite's busy handler would sleep for
// growing intervals and rarely find the lock free).
const restart = () => {
  db.pragma("busy_timeout = 0");
  try {
    for (let i = 0; i < 250; i++) {
      const [r] = db.pragma("wal_checkpoint(RESTART)");
      if (!r || r.busy === 0) return;
      Atomics.wait(pause, 0, 0, 0.2);
    }
  } finally {
    db.pragma("busy_timeout = 5000");
  }
};
const checkpoint = () => {
  try {
    const [done] = db.pragma("wal_checkpoint(PASSIVE)");
    if (done && done.log >= workerData.restartFrames) restart();
  } catch { /* busy or locked: the next tick retries */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
const openIntents = db.prepare(workerData.openIntentsSql);
parentPort.on("message", (message) => {
  if (message && message.count !== undefined) {
    let n = null;
    try { n = Number(openIntents.get(message.now).n); } catch { /* the caller counts on its own connection */ }
    parentPort.postMessage({ count: message.count, n });
    return;
  }
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
parentPort.postMessage("ready");
`;

/** A running checkpointer; `close()` runs a last checkpoint and stops the worker. */
export interface Checkpointer {
  /**
   * The open intents at `now` (OPEN_INTENTS_SQL), counted on the worker's connection; null when
   * the worker is not running (not yet started, failed, closed) or the count failed there.
   */
  countOpenIntents(now: number): Promise<number | null>;
  close(): Promise<void>;
}

/** The SQLite default of `wal_autocheckpoint`, restored when the worker is gone. */
const DEFAULT_AUTOCHECKPOINT = 1000;
/** A log of at least this many frames (4 MiB of 4 KiB pages) is restarted after its passive checkpoint. */
const RESTART_FRAMES = DEFAULT_AUTOCHECKPOINT;

/**
 * Starts the checkpoint worker for the database file of `db` (a file database in WAL mode) every
 * `intervalMs`. Resolves once the worker has opened its connection and the serving connection's
 * auto-checkpoint is off; on any failure auto-checkpoint stays (or is turned back) on.
 */
export function startCheckpointer(db: Database.Database, filename: string, intervalMs: number, synchronous: "NORMAL" | "FULL"): Checkpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, filename, intervalMs, synchronous, restartFrames: RESTART_FRAMES, openIntentsSql: OPEN_INTENTS_SQL },
  });
  worker.unref();
  let running = false;
  let closing = false;
  // Counts asked of the worker and not yet answered; the worker is referenced while any are.
  const counts = new Map<number, (n: number | null) => void>();
  let nextCount = 0;
  const answer = (id: number, n: number | null) => {
    counts.get(id)?.(n);
    counts.delete(id);
    if (counts.size === 0 && !closing) worker.unref();
  };
  const restore = () => {
    running = false;
    for (const id of [...counts.keys()]) answer(id, null);
    if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  };
  worker.on("message", (message: unknown) => {
    if (message === "ready") {
      if (!db.open) return;
      running = true;
      db.pragma("wal_autocheckpoint = 0");
    } else if (typeof message === "object" && message !== null && "count" in message) {
      const { count, n } = message as { count: number; n: number | null };
      answer(count, n);
    }
  });
  worker.once("error", restore);
  const exited = new Promise<void>((resolve) =>
    worker.once("exit", () => {
      restore();
      resolve();
    }),
  );
  return {
    countOpenIntents(now) {
      if (!running || closing) return Promise.resolve(null);
      const id = ++nextCount;
      if (counts.size === 0) worker.ref();
      return new Promise((resolve) => {
        counts.set(id, resolve);
        worker.postMessage({ count: id, now });
      });
    },
    async close() {
      closing = true;
      // Unreferenced, the worker would not keep the process alive until its last checkpoint.
      worker.ref();
      if (running) worker.postMessage("close");
      else await worker.terminate();
      await exited;
    },
  };
}
