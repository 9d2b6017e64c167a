/**
 * The child side of `npm run bench:profile`: a V8 CPU profile and the garbage collections of a
 * window the parent chooses, taken inside the process under load through `node:inspector` (the
 * same profiler `--cpu-prof` starts, but started and stopped on command, so start-up and warm-up
 * stay out of it). Commands: `profile-start`, then `profile-stop <file>`, which writes the
 * `.cpuprofile` and answers `{ file, gc }`; `heap-start`, then `heap-stop <file>`: the sampling
 * heap profiler (where the allocations of the window were made, one sample per 4 KiB allocated on
 * average, objects collected meanwhile included), written as a `.heapprofile`; `heap-start survivors`
 * samples only the objects that outlive a young-generation collection.
 */
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

/** Collections of one kind: how many, total and longest pause in ms, how many paused over 1 and 3 ms. */
export interface GcKind {
  count: number;
  totalMs: number;
  maxMs: number;
  over1ms: number;
  over3ms: number;
}

/** GC pauses of the profiled window by kind (`minor` is a young-generation scavenge). */
export type GcStats = Record<string, GcKind>;

// perf_hooks gc entry kinds (NODE_PERFORMANCE_GC_*).
const KINDS: Record<number, string> = { 1: "minor", 2: "major", 4: "incremental", 8: "weakcb" };

/** The profiler of this process; answers the parent's profile commands, or undefined for another command. */
export function createProfiler(samplingIntervalUs = 100) {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));
  let gc: GcStats = {};
  const onGc = (entry: PerformanceEntry) => {
    const kind = KINDS[(entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? "other";
    const k = (gc[kind] ??= { count: 0, totalMs: 0, maxMs: 0, over1ms: 0, over3ms: 0 });
    k.count++;
    k.totalMs += entry.duration;
    k.maxMs = Math.max(k.maxMs, entry.duration);
    if (entry.duration > 1) k.over1ms++;
    if (entry.duration > 3) k.over3ms++;
  };
  const observer = new PerformanceObserver((list) => list.getEntries().forEach(onGc));

  return async (command: string): Promise<unknown> => {
    if (command === "profile-start") {
      gc = {};
      observer.observe({ entryTypes: ["gc"] });
      await post("Profiler.enable");
      await post("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
      await post("Profiler.start");
      return { started: true };
    }
    if (command.startsWith("profile-stop ")) {
      const file = command.slice("profile-stop ".length);
      const { profile } = await post<{ profile: unknown }>("Profiler.stop");
      observer.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return { file, gc };
    }
    if (command === "heap-start" || command === "heap-start survivors") {
      await post("HeapProfiler.enable");
      // Allocations: keep the samples of objects any GC has collected (the window's allocations, not
      // what survived it). Survivors: drop those a young-generation GC collected, so what is left
      // outlived a scavenge (still live, or promoted and left for a full GC): what scavenges copy.
      const survivors = command === "heap-start survivors";
      await post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors });
      return { started: true };
    }
    if (command.startsWith("heap-stop ")) {
      const file = command.slice("heap-stop ".length);
      const { profile } = await post<{ profile: unknown }>("HeapProfiler.stopSampling");
      writeFileSync(file, JSON.stringify(profile));
      return { file };
    }
    return undefined;
  };
}
