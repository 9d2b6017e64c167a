/**
 * Readiness: whether this gateway can serve paid calls now. Checks, run concurrently with a
 * deadline each: the store answers and its schema carries every migration; each configured
 * chain's RPC answers `eth_chainId` with the configured id; each configured OpenAI-compatible
 * upstream's base URL answers HTTP at all (any status below 500; no credential is sent). The
 * report is cached for `cacheMs`, and callers arriving while a run is in flight share it, so
 * polling `/readyz` cannot multiply the traffic sent to chains and upstreams.
 */
import type { ChainConfig } from "../chain/options.js";
import { GatewayError } from "../errors.js";
import type { Clock } from "../clock.js";
import { hostOf, type HttpClient, type HttpClientResponse } from "../http/client.js";
import type { ProviderConfig } from "../media/options.js";
import type { Store } from "../store/types.js";

/** The result of one check. */
export interface CheckResult {
  readonly ok: boolean;
  /** What was found, for people (never a credential or a full URL). */
  readonly detail: string;
  /** How long the check took. */
  readonly latencyMs: number;
}

/** Every check by name (`store`, `chain:<id>`, `upstream:<provider>`), and whether all passed. */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, CheckResult>>;
}

/** What readiness looks at. */
export interface ReadinessSources {
  readonly store: Store;
  readonly http: HttpClient;
  readonly clock: Clock;
  readonly chains: readonly ChainConfig[];
  /** Configured upstream providers by name; only `openai-compatible` ones are probed. */
  readonly providers: Readonly<Record<string, ProviderConfig>>;
  /** Deadline of each check. */
  readonly timeoutMs: number;
  /** How long a report is reused. */
  readonly cacheMs: number;
  /** Told the error of a check that threw (the server log); the public detail names only its code. */
  readonly onError?: (check: string, error: unknown) => void;
}

/** The readiness probe of a gateway. */
export interface Readiness {
  /** The current report (cached for `cacheMs`; concurrent callers share one run). Never rejects. */
  check(): Promise<ReadinessReport>;
}

/** A verdict of one check, before it is timed. */
type Verdict = { readonly ok: boolean; readonly detail: string };

/** A named check. */
type Check = readonly [name: string, run: () => Promise<Verdict>];

/** A check that ran out of time; its message is ours and names no address. */
class CheckTimeout extends Error {}

/** Rejects with `what did not answer within …` after `ms`. */
function deadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * The public detail of a check that threw an error not of ours. `/readyz` answers anyone, and a
 * driver's message can name an internal host, address, user or database (`connect ECONNREFUSED
 * 10.0.0.5:5432`), so only our own messages (a timeout, a GatewayError, which names hosts only)
 * are shown; any other error shows its code (`ECONNREFUSED`, a SQLSTATE) and goes whole to `onError`.
 */
function publicDetail(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const named = typeof code === "string" && /^[A-Z0-9_]{1,40}$/i.test(code) ? `: ${code}` : "";
  return `failed${named} (the server log has the error)`;
}

/** Runs one check: its verdict and detail, or `ok: false` with a detail that is safe to publish. */
async function timed(name: string, run: () => Promise<Verdict>, onError: ReadinessSources["onError"]): Promise<CheckResult> {
  const started = performance.now();
  let verdict: Verdict;
  try {
    verdict = await run();
  } catch (error) {
    const ours = error instanceof CheckTimeout || error instanceof GatewayError;
    if (!ours) onError?.(name, error);
    verdict = { ok: false, detail: ours ? error.message : publicDetail(error) };
  }
  return Object.assign({}, verdict, { latencyMs: Math.round((performance.now() - started) * 100) / 100 });
}

/** Drops a response body unread (releasing the connection). */
async function discard(res: HttpClientResponse): Promise<void> {
  if (res.chunks) await res.chunks()[Symbol.asyncIterator]().return?.();
  else await res.bytes().catch(() => undefined);
}

/** Creates the probe. */
export function createReadiness(sources: ReadinessSources): Readiness {
  const { store, http, timeoutMs } = sources;

  const storeCheck = async (): Promise<Verdict> => (store.ready ? store.ready() : { ok: true, detail: "the store has no readiness probe" });

  const chainCheck = (chain: ChainConfig) => async (): Promise<Verdict> => {
    const res = await http({
      method: "POST",
      url: chain.rpcUrl,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      timeoutMs,
    });
    const text = await res.text();
    if (res.status !== 200) return { ok: false, detail: `${hostOf(chain.rpcUrl)} answered HTTP ${res.status}` };
    let result: unknown;
    try {
      result = (JSON.parse(text) as { result?: unknown }).result;
    } catch {
      return { ok: false, detail: `${hostOf(chain.rpcUrl)} answered something other than JSON-RPC` };
    }
    const id = typeof result === "string" && /^0x[0-9a-f]+$/i.test(result) ? Number(BigInt(result)) : undefined;
    if (id !== chain.chainId) return { ok: false, detail: `${hostOf(chain.rpcUrl)} serves chain ${id ?? JSON.stringify(result)}, not ${chain.chainId}` };
    return { ok: true, detail: `${hostOf(chain.rpcUrl)} serves chain ${id}` };
  };

  const upstreamCheck = (baseUrl: string) => async (): Promise<Verdict> => {
    const res = await http({ method: "GET", url: `${baseUrl.replace(/\/+$/, "")}/models`, timeoutMs });
    await discard(res);
    return { ok: res.status < 500, detail: `${hostOf(baseUrl)} answered HTTP ${res.status}` };
  };

  const checks: Check[] = [
    ["store", storeCheck],
    ...sources.chains.map((c): Check => [`chain:${c.chainId}`, chainCheck(c)]),
    ...Object.entries(sources.providers).flatMap(([name, p]): Check[] =>
      p.type === "openai-compatible" ? [[`upstream:${name}`, upstreamCheck(p.baseUrl)]] : [],
    ),
  ];

  let last: { at: number; report: ReadinessReport } | undefined;
  let running: Promise<ReadinessReport> | undefined;
  const run = async (): Promise<ReadinessReport> => {
    // The deadline also bounds an injected HttpClient or store that ignores its own timeouts.
    const results = await Promise.all(
      checks.map(async ([name, check]) => [name, await timed(name, () => deadline(check(), timeoutMs, name), sources.onError)] as const),
    );
    const report = { ready: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) };
    last = { at: sources.clock.now(), report };
    return report;
  };
  return {
    check() {
      if (last && sources.clock.now() - last.at < sources.cacheMs) return Promise.resolve(last.report);
      return (running ??= run().finally(() => (running = undefined)));
    },
  };
}
