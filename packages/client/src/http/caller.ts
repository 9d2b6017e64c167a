/** What resource groups call: a typed request and a stream opener bound to the client's options. */
import { APIPromise } from "../api-promise.js";
import { checkClientOptions, resolveRequest, type ClientOptions, type RequestOptions } from "../options.js";
import { openStream, request, type OpenStream, type RequestSpec } from "./request.js";

/** The client's request functions, shared by every resource group. */
export interface Caller {
  /** The client's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** Runs `spec` with the client's options overridden by `options`; the body is typed `T` as the route answers it. */
  call<T>(spec: RequestSpec, options?: RequestOptions): APIPromise<T>;
  /** Opens a stream (resolves once a 2xx answer's headers arrived). */
  open(spec: Omit<RequestSpec, "kind">, options?: RequestOptions): Promise<OpenStream>;
  /** The client's own session token (`sessionToken` option, or the last `auth.signIn`). */
  sessionToken(): string | undefined;
  /** Replaces the client's session token for later calls (`undefined` forgets it). */
  setSessionToken(token: string | undefined): void;
}

/** Builds the caller of a client; throws at once on invalid options. */
export function createCaller(options: ClientOptions): Caller {
  const baseUrl = checkClientOptions(options);
  const client: ClientOptions = { ...options, headers: { ...options.headers } };
  return {
    baseUrl,
    // Option errors (a bad per-call timeoutMs) reject the call rather than throw synchronously.
    call: <T>(spec: RequestSpec, o?: RequestOptions) => new APIPromise(Promise.resolve().then(() => request(baseUrl, resolveRequest(client, o, spec.bearer), spec))) as APIPromise<T>,
    open: async (spec, o) => openStream(baseUrl, resolveRequest(client, o, spec.bearer), spec),
    sessionToken: () => client.sessionToken ?? undefined,
    setSessionToken: (token) => {
      client.sessionToken = token;
    },
  };
}

/** One encoded path segment. */
export const segment = (value: string | number): string => encodeURIComponent(String(value));
