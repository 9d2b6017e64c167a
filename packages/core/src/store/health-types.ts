/** The optional probes of a store: readiness (`GET /readyz`) and the open-reservation gauge (`GET /metrics`). */

/** The answer of {@link HealthStore.ready}. */
export interface StoreReadiness {
  readonly ok: boolean;
  /** What was found, e.g. "SQLite, schema at migration 12" or the failure. */
  readonly detail: string;
}

/**
 * Counters of a store's group commit since it opened (the ledger writes of one event-loop turn
 * committed together): read at each metrics scrape, so reading them must cost nothing.
 */
export interface GroupCommitStats {
  /** Transactions that carried two or more ledger writes. */
  readonly groups: number;
  /** The ledger writes in those transactions. */
  readonly grouped: number;
  /** Groups rolled back and re-run one write at a time because one write (or the database) refused. */
  readonly retried: number;
  /** Deadlocks the database reported (PostgreSQL), each resolved by re-running its victim. */
  readonly deadlocks: number;
}

/** Probes a store may offer; a store without them is taken as ready and leaves the gauge out. */
export interface HealthStore {
  /**
   * Readiness probe: one cheap round trip that answers `ok: true` only when the store is open,
   * reachable and its schema carries every migration this code knows. Resolves `ok: false` with
   * the reason (or rejects) otherwise; never writes.
   */
  ready?(): Promise<StoreReadiness>;
  /**
   * How many payment intents hold a reservation at `now` (status `authorized`, `expiresAt > now`),
   * over the whole store. Read at each metrics scrape, so it must be cheap (an index-only count in
   * SQL stores).
   */
  countOpenIntents?(now: number): Promise<number>;
  /** The group commit's counters; absent when the store does not group its writes. */
  groupCommitStats?(): GroupCommitStats;
}
