/**
 * Reads a V8 `.cpuprofile` (the format `--cpu-prof` and the inspector write): the busy samples
 * (idle left out) by area of the code and by function, self time and inclusive time; and a
 * sampling `.heapprofile`: the bytes allocated by area and by function. Frames of a bundled
 * script (lib.ts `bundle`) are mapped back to their source files through its source map.
 */
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

const maps = new Map<string, SourceMap | null>();

/** The frame with `url` (and line) of its source file when its script has a source map beside it. */
export function original(frame: CallFrame): CallFrame {
  if (!frame.url.startsWith("file://")) return frame;
  const file = fileURLToPath(frame.url);
  let map = maps.get(file);
  if (map === undefined) {
    map = existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8"))) : null;
    maps.set(file, map);
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
  if (!entry || !("originalSource" in entry)) return frame;
  return { ...frame, url: resolve(dirname(file), entry.originalSource), lineNumber: entry.originalLine };
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** A share of the busy samples. */
export interface Share {
  name: string;
  share: number;
}

/** What a profile says. */
export interface ProfileSummary {
  busySamples: number;
  idleSamples: number;
  /** Self time by area (see {@link areaOf}), largest first. */
  areas: Share[];
  /** Self time by function (`name file`), largest first. */
  functions: Share[];
  /** Inclusive time by function: the function and everything it called. */
  inclusive: Share[];
}

const shortFile = (url: string) => url.split("/").slice(-2).join("/");

/**
 * The area of a frame with a source file: the store, a core capability folder, the Node adapter's
 * files, undici or another package, a Node subsystem; V8's own frames (GC, "(program)") by name.
 */
export function areaOf({ url, functionName }: CallFrame): string {
  if (url.includes("/bench/procs/")) return "benchmark process glue (bench/procs)";
  if (url.includes("/packages/sqlite/") || url.includes("node_modules/better-sqlite3/")) return "SQLite store (statements run inside its steps, commits)";
  const core = /\/packages\/core\/src\/([^/]+)\//.exec(url) ?? /\/packages\/core\/src\/([^/]+)\.ts/.exec(url);
  if (core) return `core: ${core[1]}`;
  const adapter = /\/packages\/node\/src\/([^/]+)\.ts/.exec(url);
  if (adapter) return `node adapter: ${adapter[1]}.ts`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] === "undici" ? "undici (the upstream HTTP client)" : `package: ${pkg[1]}`;
  if (/^node:(_http_|net|internal\/(streams|stream_base_commons|http))/.test(url)) return "node: http, sockets, streams";
  if (/^node:(internal\/)?(timers|process\/task_queues|process\/promises|events|internal\/event_target|internal\/abort_controller)/.test(url))
    return "node: timers, events, promises, abort signals";
  if (url.startsWith("node:")) return "node: other";
  if (functionName === "runMicrotasks") return "node: timers, events, promises, abort signals";
  return `V8: ${functionName}`;
}

/** Frames of V8 itself rather than of code: their own area even where they have a caller. */
const V8_FRAMES = new Set(["(garbage collector)", "(program)", "(root)"]);

const top = (counts: Map<string, number>, busy: number, n: number): Share[] =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => ({ name, share: count / busy }));

/** Summarizes the profile at `file`. */
export function summarize(file: string, limit = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  for (const n of profile.nodes) n.callFrame = original(n.callFrame);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${shortFile(f.url)}`.trim();
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  let idle = 0;
  for (const id of profile.samples) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") {
      idle++;
      continue;
    }
    // A native function (a SQLite statement's run/get, a socket's writev) counts in the area of
    // the nearest caller that has a source file.
    let owner: number | undefined = id;
    while (owner !== undefined && byId.get(owner)!.callFrame.url === "" && !V8_FRAMES.has(byId.get(owner)!.callFrame.functionName)) owner = parent.get(owner);
    add(areas, areaOf(byId.get(owner ?? id)!.callFrame));
    add(functions, label(frame));
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!.callFrame);
      if (name !== "(root)" && !seen.has(name)) (seen.add(name), add(inclusive, name));
    }
  }
  const busy = profile.samples.length - idle;
  return {
    busySamples: busy,
    idleSamples: idle,
    areas: top(areas, busy, limit),
    functions: top(functions, busy, limit),
    inclusive: top(inclusive, busy, limit),
  };
}

interface HeapNode {
  id: number;
  callFrame: CallFrame;
  children: HeapNode[];
}
interface HeapProfile {
  head: HeapNode;
  samples: Array<{ nodeId: number; size: number }>;
}

/** What a sampling heap profile says, per call: bytes allocated in all, by area and by function. */
export interface HeapSummary {
  bytesPerCall: number;
  /** Bytes per call by area ({@link areaOf}), largest first. */
  areas: Array<{ name: string; bytes: number }>;
  /** Bytes per call by the function that allocated them, largest first. */
  functions: Array<{ name: string; bytes: number }>;
}

/**
 * Summarizes the heap profile at `file` over `calls` calls. Allocations made by native code
 * count for the nearest JavaScript caller with a source file, as in {@link summarize}.
 */
export function summarizeHeap(file: string, calls: number, limit = 20): HeapSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as HeapProfile;
  const sizes = new Map<number, number>();
  for (const s of profile.samples) sizes.set(s.nodeId, (sizes.get(s.nodeId) ?? 0) + s.size);
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, owner: CallFrame | undefined) => {
    const frame = original(node.callFrame);
    const at = frame.url !== "" || V8_FRAMES.has(frame.functionName) ? frame : owner;
    const size = sizes.get(node.id) ?? 0;
    if (size > 0) {
      total += size;
      const who = at ?? frame;
      areas.set(areaOf(who), (areas.get(areaOf(who)) ?? 0) + size);
      const name = `${who.functionName || "(anonymous)"} ${shortFile(who.url)}`.trim();
      functions.set(name, (functions.get(name) ?? 0) + size);
    }
    for (const child of node.children) walk(child, at);
  };
  walk(profile.head, undefined);
  const perCall = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, bytes]) => ({ name, bytes: bytes / calls }));
  return { bytesPerCall: total / calls, areas: perCall(areas), functions: perCall(functions) };
}
