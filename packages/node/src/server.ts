/** The standalone server: node:http + the bridge, nothing else. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Gateway } from "@tollgate/core";
import { createNodeHandler } from "./bridge.js";
import type { NodeHandlerOptions } from "./bridge.js";

/** Options of {@link createServer}. */
export interface ServerOptions extends NodeHandlerOptions {
  /** Idle keep-alive socket lifetime in ms; above common load-balancer idle timeouts (60 s). @default 65000 */
  keepAliveTimeoutMs?: number;
  /** Time allowed to receive the request headers in ms; must exceed `keepAliveTimeoutMs`. @default 66000 */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request in ms (0 = none; slow media uploads need room). @default 300000 */
  requestTimeoutMs?: number;
}

/** Options of {@link serve}. */
export interface ServeOptions extends ServerOptions {
  /** TCP port; 0 picks a free one. @default 8787 */
  port?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  host?: string;
}

/** A listening server started by {@link serve}. */
export interface RunningServer {
  readonly server: http.Server;
  /** The base URL it answers on, e.g. `http://127.0.0.1:8787` (IPv6 hosts in brackets). */
  readonly url: string;
  /**
   * Stops accepting connections, ends idle keep-alive sockets, waits for in-flight requests (at
   * most `graceMs`, then cuts the rest, e.g. long SSE streams), then awaits `gateway.close()`.
   * Idempotent: later calls return the first call's promise.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Creates (does not start) an `http.Server` that serves every request through the gateway via
 * {@link createNodeHandler}, with keep-alive timeouts sane behind load balancers
 * (keepAliveTimeout 65 s, headersTimeout 66 s).
 */
export function createServer(gateway: Pick<Gateway, "handle">, options: ServerOptions = {}): http.Server {
  const handler = createNodeHandler(gateway, options);
  const server = http.createServer({ requestTimeout: options.requestTimeoutMs ?? 300_000 }, (req, res) => {
    void handler(req, res);
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  server.headersTimeout = options.headersTimeoutMs ?? Math.max(66_000, server.keepAliveTimeout + 1_000);
  return server;
}

/**
 * Starts a server for the gateway and resolves once it listens. Rejects if the port cannot be
 * bound (e.g. `EADDRINUSE`); the gateway is not closed in that case.
 */
export async function serve(gateway: Gateway, options: ServeOptions = {}): Promise<RunningServer> {
  const server = createServer(gateway, options);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8787, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" || address.address.includes(":") ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close({ graceMs = 10_000 } = {}) {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => server.closeAllConnections(), graceMs);
          server.close(() => {
            clearTimeout(force);
            resolve();
          });
          server.closeIdleConnections();
        });
        await gateway.close();
      })();
      return closing;
    },
  };
}
