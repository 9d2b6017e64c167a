/**
 * Listing a wallet's payment intents: the filters, the bounded scan and the keyset cursor that
 * every store shares. A wallet's history grows by one intent per paid call, so a filtered page
 * must not walk it to its end: each page examines at most `scan` intents after its cursor, newest
 * first (and the rest of the last one's millisecond), and hands back a cursor at that millisecond
 * when it filled no page. Such a cursor names a time, never an intent: the intents it passed over
 * are ones the filter hides from the caller (another key, another chain), and an intent id is the
 * capability to settle or abort it.
 */
import type { IntentCursor, IntentRecord, IntentStatus } from "./types.js";

/**
 * How many of a wallet's intents one page examines at most (newest first, after its cursor)
 * when it filters by key, chain or status: about a millisecond of index reads on SQLite.
 */
export const INTENT_LIST_SCAN = 1_000;

/** What `listIntents` filters and how far one page may look. */
export interface IntentListOptions {
  /** Page size (the service clamps it to 1..200). */
  limit: number;
  /** The previous page's `nextCursor`; the page starts strictly after it. */
  cursor?: IntentCursor;
  chainId?: number;
  keyId?: string;
  /**
   * The status as listed at `now`: an authorized intent whose `expiresAt <= now` is listed as
   * `expired` (not `authorized`) without being written.
   */
  status?: IntentStatus;
  /** The time `status` is judged at; required with `status`. */
  now?: number;
  /** At most this many intents examined per page when a filter is set; default {@link INTENT_LIST_SCAN}. */
  scan?: number;
}

/** A page of intents; `nextCursor` is null only when nothing after the page is left to examine. */
export interface IntentListPage {
  intents: IntentRecord[];
  nextCursor: IntentCursor | null;
}

/** The status an intent is listed with at `now`: an overdue authorized intent as `expired`. */
export function listedStatus(intent: Pick<IntentRecord, "status" | "expiresAt">, now: number): IntentStatus {
  return intent.status === "authorized" && intent.expiresAt <= now ? "expired" : intent.status;
}

/** Whether the options filter at all (without a filter every examined intent is listed). */
export function filtersIntents(options: IntentListOptions): boolean {
  return options.chainId !== undefined || options.keyId !== undefined || options.status !== undefined;
}

/** How many intents a filtered page examines: `scan`, at least 1, default {@link INTENT_LIST_SCAN}. */
export function intentScan(options: IntentListOptions): number {
  return Math.max(1, Math.floor(options.scan ?? INTENT_LIST_SCAN));
}

/**
 * Row-value bounds for SQL stores: the page reads `(created_at, intent_id) < (before)` and
 * `>= (from)`. No cursor starts above every row; no boundary ends below every row.
 */
export const INTENT_LIST_OPEN = {
  before: { createdAt: Number.MAX_SAFE_INTEGER, intentId: "" },
  from: { createdAt: Number.MIN_SAFE_INTEGER, intentId: "" },
} as const;

/**
 * Where a filtered scan that ended at `last` (the last intent it may examine) stops: the start of
 * that intent's millisecond, so the page examines the rest of it and its cursor names no intent
 * (every intent id sorts after "").
 */
export function scanEdge(last: IntentCursor): IntentCursor {
  return { createdAt: last.createdAt, intentId: "" };
}

/**
 * The page from the rows a SQL page query returned (asked for `limit + 1`, newest first, within
 * the scan) and the scan's `boundary` (the last intent it may examine, or null when the history
 * ends first): more rows than `limit` → the cursor is the last listed; otherwise the boundary.
 */
export function intentListPage<R>(rows: readonly R[], limit: number, boundary: IntentCursor | null, map: (row: R) => IntentRecord): IntentListPage {
  const n = Math.max(0, Math.floor(limit));
  const intents = rows.slice(0, n).map(map);
  const last = intents[intents.length - 1];
  if (rows.length > n && last) return { intents, nextCursor: { createdAt: last.createdAt, intentId: last.intentId } };
  return { intents, nextCursor: boundary };
}

/** Newest first: createdAt descending, then intentId descending. */
function newerFirst(a: IntentCursor, b: IntentCursor): number {
  return b.createdAt - a.createdAt || (a.intentId < b.intentId ? 1 : a.intentId > b.intentId ? -1 : 0);
}

/**
 * The same page over records in memory (the memory store): `owned` are all of the wallet's
 * intents, in any order; the result is the one a SQL store gives for the same rows.
 */
export function memoryIntentPage(owned: readonly IntentRecord[], options: IntentListOptions): IntentListPage {
  const { cursor, limit } = options;
  const after = owned.filter((i) => !cursor || newerFirst(cursor, i) < 0).sort(newerFirst);
  const filtered = filtersIntents(options);
  const scanned = filtered ? after.slice(0, intentScan(options)) : after;
  const boundary = filtered && after.length > scanned.length ? scanEdge(scanned[scanned.length - 1]!) : null;
  const window = boundary ? after.filter((i) => i.createdAt >= boundary.createdAt) : scanned;
  const now = options.now ?? Number.NEGATIVE_INFINITY;
  const matches = window.filter(
    (i) =>
      (options.chainId === undefined || i.chainId === options.chainId) &&
      (options.keyId === undefined || i.keyId === options.keyId) &&
      (options.status === undefined || (options.now === undefined ? i.status : listedStatus(i, now)) === options.status),
  );
  const page = intentListPage(matches.slice(0, Math.max(0, Math.floor(limit)) + 1), limit, null, (i) => i);
  if (page.nextCursor || !boundary) return page;
  return { intents: page.intents, nextCursor: boundary };
}
