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
export {
  /** Spawns anvil (from `@foundry-rs/anvil`) on a free loopback port; resolves `{ rpcUrl, chainId, port, pid, accounts, stop() }` once its RPC answers. */
  startAnvil,
  /** The anvil executable it runs: `ANVIL_BIN`, else the `@foundry-rs/anvil` platform binary, else `anvil` on the PATH. */
  anvilBinaryPath,
  type AnvilAccount,
  type AnvilNode,
  type StartAnvilOptions,
} from "./dev-chain/anvil.js";
export {
  /** The dev chain of `tollgate serve`: anvil + TestUSDC + a funded dispenser, and the gateway options (`chains`, `x402`, `dispenser`, `settlement`) that use it. Test money only. */
  startDevChain,
  type DevChain,
  type StartDevChainOptions,
} from "./dev-chain/dev-chain.js";
