/** Client for the optional external models service behind `GET /api/models`. */
import { GatewayError } from "../errors.js";
import type { HttpClient } from "../http/client.js";
import { boundedText, hostOf } from "../http/client.js";

/** The largest models-service answer read (a catalog of thousands of models is a few MB; larger is refused with 502). */
const MAX_MODELS_SERVICE_BYTES = 32 * 1024 * 1024;

/** Where the models service lives. */
export interface ModelsServiceOptions {
  /** Absolute URL answering GET with the catalog JSON. */
  readonly url: string;
  /** @default 5000 (milliseconds) */
  readonly timeoutMs?: number;
  /** Extra headers (e.g. an API key for the service). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Fetches the models service's catalog, forwarding the query string. Throws 504
 * `upstream_timeout` on timeout and 502 `upstream_error` on a connection failure, a non-2xx
 * status or a body that is not JSON.
 */
export async function fetchModelsService(http: HttpClient, options: ModelsServiceOptions, query: URLSearchParams, signal?: AbortSignal): Promise<unknown> {
  const url = new URL(options.url);
  for (const [k, v] of query) url.searchParams.append(k, v);
  const res = await http({
    method: "GET",
    url: url.toString(),
    headers: { accept: "application/json", ...options.headers },
    timeoutMs: options.timeoutMs ?? 5000,
    ...(signal ? { signal } : {}),
  });
  const text = await boundedText(res, MAX_MODELS_SERVICE_BYTES, `The models service at ${hostOf(options.url)}`);
  if (res.status < 200 || res.status > 299)
    throw new GatewayError("upstream_error", `The models service at ${hostOf(options.url)} answered ${res.status}.`, { details: { upstreamStatus: res.status } });
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError("upstream_error", `The models service at ${hostOf(options.url)} did not answer JSON.`);
  }
}
