/**
 * @tollgate/node — the one Node bridge between `IncomingMessage`/`ServerResponse` and the
 * gateway's plain request/response shapes, a standalone server, the undici HTTP client, and the
 * configuration helpers of the `tollgate` CLI.
 */
export {
  /** Node handler `(req, res, next?)` over `gateway.handle`; never rejects. See {@link createNodeHandler}. */
  createNodeHandler,
  /** IncomingMessage -> GatewayRequest (lazy size-capped body, abort signal, origin). */
  toGatewayRequest,
  /** GatewayResponse -> ServerResponse (JSON, bytes, SSE with backpressure, empty). */
  writeGatewayResponse,
  /** The path relative to a mount path, or undefined when outside it. */
  stripBasePath,
  type NodeHandler,
  type NodeHandlerOptions,
  type ToGatewayRequestOptions,
  type WriteGatewayResponseOptions,
} from "./bridge.js";
export {
  /** An unstarted `http.Server` serving the gateway (keepAliveTimeout 65 s, headersTimeout 66 s). */
  createServer,
  /** Starts a server; resolves `{ server, url, close() }` once listening. */
  serve,
  type RunningServer,
  type ServeOptions,
  type ServerOptions,
} from "./server.js";
export {
  /** The pooled keep-alive undici `HttpClient` (upstream_timeout / upstream_error on failure). */
  createUndiciHttpClient,
  type UndiciHttpClient,
  type UndiciHttpClientOptions,
} from "./http-client.js";
export {
  /** Parses argv + env against an option table; problems come back as one line each. */
  parseOptions,
  /** `--help` text generated from an option table. */
  formatHelp,
  /** The option table of `tollgate serve`. */
  serveOptions,
  catalogFileSchema,
  corsOriginsSchema,
  filePathSchema,
  hostSchema,
  httpUrlSchema,
  portSchema,
  type ConfigOf,
  type OptionSpec,
  type OptionTable,
  type ParseResult,
  type ServeConfig,
} from "./config.js";
