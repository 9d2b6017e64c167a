/** The transcription rests of the memory store. */
import type { TranscriptRestRecord, TranscriptRestStore } from "./transcript-rest-types.js";

/** In-memory rests (synchronous inside each method: that is their atomicity). */
export function createMemoryTranscriptRestStore(): TranscriptRestStore {
  const rests = new Map<string, TranscriptRestRecord>();
  const prune = (now: number) => {
    for (const [id, r] of rests) if (r.expiresAt <= now) rests.delete(id);
  };
  return {
    async putTranscriptRest(record, now, onlyIfAbsent = false, maxEntries = Number.POSITIVE_INFINITY) {
      prune(now);
      if (onlyIfAbsent && rests.has(record.id)) return false;
      rests.set(record.id, Object.assign({}, record));
      while (rests.size > maxEntries) {
        let cheapest: TranscriptRestRecord | undefined;
        for (const r of rests.values()) if (!cheapest || r.paid < cheapest.paid || (r.paid === cheapest.paid && r.expiresAt < cheapest.expiresAt)) cheapest = r;
        rests.delete(cheapest!.id);
      }
      return rests.has(record.id);
    },
    async getTranscriptRest(id, now) {
      const r = rests.get(id);
      return r && r.expiresAt > now ? Object.assign({}, r) : null;
    },
    async takeTranscriptRest(id, version, now) {
      const r = rests.get(id);
      if (!r || r.version !== version || r.expiresAt <= now) return false;
      rests.delete(id);
      return true;
    },
  };
}
