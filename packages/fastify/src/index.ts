/**
 * @tollgate/fastify — the gateway as an encapsulated Fastify plugin:
 * `app.register(createHandler(gateway), { prefix: "/gateway" })`. Fastify does not parse bodies
 * inside the plugin (the gateway reads the raw stream itself, so empty JSON bodies on GET/DELETE,
 * multipart uploads and the gateway's own size limits all work), and every answer, SSE included,
 * is written through the Node bridge of @tollgate/node on the hijacked reply.
 */
import type { Gateway } from "@tollgate/core";
import { createNodeHandler } from "@tollgate/node";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";

/** Options of {@link createHandler}; the same names as every Tollgate framework adapter. */
export interface FastifyHandlerOptions {
  /** Path stripped before routing in the gateway. @default the plugin's registration prefix (e.g. `"/gateway"`) */
  basePath?: string;
  /** Hard cap in bytes on a request body, below the per-route limits of the gateway (larger bodies get 413). @default unlimited */
  maxBodySize?: number;
  /** Called once per error that escaped the gateway or happened while writing the answer. @default logs to stderr */
  onError?: (error: unknown) => void;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * Builds the plugin serving `gateway` under the prefix it is registered with. It is encapsulated:
 * its content-type parsers (one catch-all that leaves the body unread) do not affect the rest of
 * the app, and paths outside the prefix reach the app's own routes and 404 handler. Never passes
 * an error to Fastify: a failure before the answer started becomes a 500 error envelope, one later
 * (mid-SSE) closes the connection; both are reported once to `onError`.
 */
export function createHandler(gateway: Pick<Gateway, "handle">, options: FastifyHandlerOptions = {}): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const handle = createNodeHandler(gateway, { ...options, basePath: options.basePath ?? app.prefix });
    app.removeAllContentTypeParsers();
    // The body stays in the raw stream; the gateway reads it lazily, with its own limits.
    app.addContentTypeParser("*", (_request, _payload, done) => done(null));
    for (const url of ["/", "/*"]) {
      app.route({
        method: METHODS,
        url,
        handler: (request, reply) => {
          reply.hijack();
          return handle(request.raw, reply.raw);
        },
      });
    }
  };
}
