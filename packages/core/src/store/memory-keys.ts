/** Key reads of the memory store: a newest-first keyset page, and a wallet's active session key. */
import { isLiveKey } from "./key-limits.js";
import type { KeyRecord } from "./types.js";

/** A newest-first keyset page (createdAt desc, id desc) of `items` after `cursor`; `next` is null on the last page. */
export function newestFirstPage<T extends { createdAt: number }>(
  items: T[],
  idOf: (item: T) => string,
  cursor: { createdAt: number; id: string } | undefined,
  limit: number,
): { items: T[]; next: { createdAt: number; id: string } | null } {
  const after = (x: T) => !cursor || x.createdAt < cursor.createdAt || (x.createdAt === cursor.createdAt && idOf(x) < cursor.id);
  const sorted = items.filter(after).sort((a, b) => b.createdAt - a.createdAt || (idOf(a) < idOf(b) ? 1 : idOf(a) > idOf(b) ? -1 : 0));
  const page = sorted.slice(0, Math.max(0, limit));
  const last = page[page.length - 1];
  return { items: page, next: sorted.length > page.length && last ? { createdAt: last.createdAt, id: idOf(last) } : null };
}

/** The newest of `owner`'s session keys on `chainId` that is neither revoked nor expired at `now`. */
export function activeSessionOf(keys: Iterable<KeyRecord>, owner: string, chainId: number, now: number): KeyRecord | undefined {
  let found: KeyRecord | undefined;
  for (const k of keys) {
    if (k.owner !== owner || k.chainId !== chainId || k.purpose !== "session" || !isLiveKey(k, now)) continue;
    if (!found || k.createdAt > found.createdAt || (k.createdAt === found.createdAt && k.keyId > found.keyId)) found = k;
  }
  return found;
}
