/** `createTollgateClient`: one object with a method per gateway route, grouped by resource. */
import type { APIPromise } from "./api-promise.js";
import { createCaller } from "./http/caller.js";
import type { QueryValue } from "./http/encoding.js";
import type { BearerPolicy, HttpMethod } from "./http/request.js";
import type { ClientOptions, RequestOptions } from "./options.js";
import { authResource, type AuthResource } from "./resources/auth.js";
import { chatResource, type ChatResource } from "./resources/chat.js";
import { agentsResource, directoryResource, type AgentsResource, type DirectoryResource } from "./resources/agents.js";
import { dispenserResource, type DispenserResource } from "./resources/dispenser.js";
import { feedbackResource, type FeedbackResource } from "./resources/feedback.js";
import { keysResource, type KeysResource } from "./resources/keys.js";
import { audioResource, embeddingsResource, imagesResource, type AudioResource, type EmbeddingsResource, type ImagesResource } from "./resources/media.js";
import { catalogResource, modelsResource, type CatalogResource, type ModelsResource } from "./resources/models.js";
import { paymentsResource, type PaymentsResource } from "./resources/payments.js";
import { settlementResource, type SettlementResource } from "./resources/settlement.js";
import { usageResource, type UsageResource } from "./resources/usage.js";
import { videosResource, type VideosResource } from "./resources/videos.js";

/** A call to any path, for routes the client has no method for (or to probe the gateway). */
export interface RawRequest {
  method: HttpMethod;
  /** Path below the base URL, starting with "/" (encode path parameters yourself). */
  path: string;
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  body?: unknown;
  /** Whether repeating the call is harmless: decides what is retried. @default true for GET, HEAD, OPTIONS and DELETE, else false */
  idempotent?: boolean;
  /** Which credential goes in `Authorization`: `"wallet"` for a wallet route (the session token first), `"key-first"`, or the `apiKey` only. @default "key" */
  bearer?: BearerPolicy;
}

/** The OpenAPI document of the gateway (`GET /openapi.json`), as parsed JSON. */
export interface OpenAPIDocument {
  openapi: string;
  info: { title: string; version: string; [field: string]: unknown };
  paths: Record<string, Record<string, unknown>>;
  [field: string]: unknown;
}

/** The typed client of a Tollgate gateway. Every method takes per-call {@link RequestOptions} last. */
export interface TollgateClient {
  /** Wallet sessions: Sign-In with Ethereum (`signIn`, or `nonce` + `verify`), `session`, `signOut`. */
  readonly auth: AuthResource;
  /** Service keys: create, list, get, revoke, legacy settle; update, rotate and their events. */
  readonly keys: KeysResource;
  /** Payment intents: prepare, settle, abort, list; and metering. */
  readonly payments: PaymentsResource;
  /** Paid chat completions (`chat.completions.create`), streamed or not. */
  readonly chat: ChatResource;
  /** Paid image generation and edits. */
  readonly images: ImagesResource;
  /** Paid speech and transcription. */
  readonly audio: AudioResource;
  /** Paid embeddings. */
  readonly embeddings: EmbeddingsResource;
  /** Paid video submission, polling and the status stream. */
  readonly videos: VideosResource;
  /** The model catalog. */
  readonly models: ModelsResource;
  /** The catalog proxy and the pricing table. */
  readonly catalog: CatalogResource;
  /** Feedback on targets. */
  readonly feedback: FeedbackResource;
  /** The test-funds dispenser. */
  readonly dispenser: DispenserResource;
  /** Deferred settlement state and the internal batch. */
  readonly settlement: SettlementResource;
  /** A wallet's spend by day and by model over a range (the dashboard's data). */
  readonly usage: UsageResource;
  /** Agent cards. */
  readonly agents: AgentsResource;
  /** The external agent directory. */
  readonly directory: DirectoryResource;
  /** The gateway's OpenAPI document. */
  openapi(options?: RequestOptions): APIPromise<OpenAPIDocument>;
  /** Any call, with the client's credentials, retries, timeout and error mapping; the body is typed `T` unchecked. */
  request<T = unknown>(request: RawRequest, options?: RequestOptions): APIPromise<T>;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "DELETE"]);

/**
 * Creates a client for the gateway at `options.baseUrl`. Needs only `fetch` (browsers, edge
 * runtimes, Node 20+). Throws a `TypeError`/`RangeError` at once on invalid options.
 *
 * ```ts
 * const client = createTollgateClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "svc-…", networkId: 8453 });
 * // or, for the wallet routes: await client.auth.signIn({ address, chainId, signMessage })
 * const { data, meta } = await client.embeddings.create({ model: "text-embedding-3-small", input: "hi" }).withResponse();
 * ```
 */
export function createTollgateClient(options: ClientOptions): TollgateClient {
  const caller = createCaller(options);
  return {
    auth: authResource(caller),
    keys: keysResource(caller, options.networkId),
    payments: paymentsResource(caller),
    chat: chatResource(caller),
    images: imagesResource(caller),
    audio: audioResource(caller),
    embeddings: embeddingsResource(caller),
    videos: videosResource(caller),
    models: modelsResource(caller),
    catalog: catalogResource(caller),
    feedback: feedbackResource(caller),
    dispenser: dispenserResource(caller),
    settlement: settlementResource(caller),
    usage: usageResource(caller),
    agents: agentsResource(caller),
    directory: directoryResource(caller),
    openapi: (o) => caller.call({ method: "GET", path: "/openapi.json", idempotent: true }, o),
    request: (r, o) => caller.call({ ...r, idempotent: r.idempotent ?? SAFE_METHODS.has(r.method) }, o),
  };
}
