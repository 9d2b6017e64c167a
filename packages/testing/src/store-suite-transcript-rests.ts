/** Conformance: transcription rests (docs/media.md "x402: a file longer than its quote"): kept for minutes, taken once. */
import { expect } from "vitest";
import type { TranscriptRestRecord } from "@tollgate/core";
import { T0, uniq, type StoreTest } from "./store-fixtures.js";

const rest = (over: Partial<TranscriptRestRecord> = {}): TranscriptRestRecord =>
  Object.assign(
    { id: `rest_${uniq()}`, version: `v_${uniq()}`, paid: 2_500n, rest: '{"finalAmount":"100"}', result: '{"text":"all of it"}', expiresAt: T0 + 600_000 },
    over,
  );

export const transcriptRestTests = {
  "transcript rests: kept until they expire, replaced by a put, kept by a put onlyIfAbsent": async ({ store }) => {
    const a = rest({ paid: (1n << 63n) - 1n });
    expect(await store.putTranscriptRest(a, T0)).toBe(true);
    expect(await store.getTranscriptRest(a.id, T0)).toEqual(a);
    expect(await store.getTranscriptRest(a.id, a.expiresAt)).toBeNull();
    expect(await store.getTranscriptRest("rest_none", T0)).toBeNull();
    const b = rest({ id: a.id, paid: 7n });
    expect(await store.putTranscriptRest(b, T0, true)).toBe(false);
    expect(await store.getTranscriptRest(a.id, T0)).toEqual(a);
    expect(await store.putTranscriptRest(b, T0)).toBe(true);
    expect(await store.getTranscriptRest(a.id, T0)).toEqual(b);
    // An expired entry does not block a put onlyIfAbsent.
    const c = rest({ id: a.id, expiresAt: b.expiresAt + 600_000 });
    expect(await store.putTranscriptRest(c, b.expiresAt, true)).toBe(true);
    expect(await store.getTranscriptRest(a.id, b.expiresAt)).toEqual(c);
  },

  "transcript rests: a take removes only the version it read, only while fresh; 20 concurrent takes, one wins": async ({ store }) => {
    const a = rest();
    await store.putTranscriptRest(a, T0);
    expect(await store.takeTranscriptRest(a.id, "v_other", T0)).toBe(false);
    expect(await store.takeTranscriptRest(a.id, a.version, a.expiresAt)).toBe(false);
    const wins = await Promise.all(Array.from({ length: 20 }, () => store.takeTranscriptRest(a.id, a.version, T0)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await store.getTranscriptRest(a.id, T0)).toBeNull();
    // Put back after a take that paid nothing: only if nobody put another meanwhile.
    expect(await store.putTranscriptRest(a, T0, true)).toBe(true);
    expect(await store.takeTranscriptRest(a.id, a.version, T0 + 1)).toBe(true);
  },

  "transcript rests: beyond maxEntries the least paid go, the new entry too when it paid least": async ({ store }) => {
    const [a, b, c] = [rest({ paid: 50n }), rest({ paid: 10n }), rest({ paid: 30n })];
    for (const r of [a, b, c]) expect(await store.putTranscriptRest(r, T0)).toBe(true);
    const paidOf = async () => (await Promise.all([a, b, c].map((r) => store.getTranscriptRest(r.id, T0)))).map((r) => r?.paid ?? null);
    const rich = rest({ paid: 1_000n });
    expect(await store.putTranscriptRest(rich, T0, false, 3)).toBe(true);
    expect(await store.getTranscriptRest(rich.id, T0)).toEqual(rich);
    expect(await paidOf()).toEqual([50n, null, 30n]);
    const poor = rest({ paid: 1n });
    expect(await store.putTranscriptRest(poor, T0, false, 3)).toBe(false);
    expect(await store.getTranscriptRest(poor.id, T0)).toBeNull();
    expect(await paidOf()).toEqual([50n, null, 30n]);
  },

  "transcript rests: expired entries are deleted by later puts": async ({ store }) => {
    const old = rest({ expiresAt: T0 + 10 });
    await store.putTranscriptRest(old, T0);
    await store.putTranscriptRest(rest(), T0 + 20);
    // Fresh again by the clock it is read with, it is gone all the same: the put deleted it.
    expect(await store.getTranscriptRest(old.id, T0)).toBeNull();
  },
} satisfies Record<string, StoreTest>;
