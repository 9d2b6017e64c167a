/**
 * @tollgate/express — the gateway as an Express `Router`, mountable at any path:
 * `app.use("/gateway", createHandler(gateway))`. Requests go through the Node bridge of
 * @tollgate/node; a body `express.json()` already parsed is used as is, any other body (multipart
 * uploads included) is streamed to the gateway untouched.
 */
import type { Gateway } from "@tollgate/core";
import { createNodeHandler } from "@tollgate/node";
import express from "express";
import type { Router } from "express";

/** Options of {@link createHandler}; the same names as every Tollgate framework adapter. */
export interface ExpressHandlerOptions {
  /**
   * Path of the gateway below the Router's mount point (e.g. `"/gw"` with `app.use(createHandler(gateway, { basePath: "/gw" }))`).
   * Requests outside it fall through to the next middleware. @default "" (everything under the mount point)
   */
  basePath?: string;
  /** Hard cap in bytes on a request body the gateway streams, below its per-route limits (larger bodies get 413). @default unlimited */
  maxBodySize?: number;
  /** Called once per error that escaped the gateway or happened while writing the answer. @default logs to stderr */
  onError?: (error: unknown) => void;
}

/**
 * Builds an Express Router serving `gateway`. Express strips the mount path, so routes are matched
 * on the path below it. Never forwards an error to Express: a failure before the answer started
 * becomes a 500 error envelope, one later (mid-SSE) closes the connection; both are reported once
 * to `onError`. Works whether or not `express.json()` ran before it.
 */
export function createHandler(gateway: Pick<Gateway, "handle">, options: ExpressHandlerOptions = {}): Router {
  const handle = createNodeHandler(gateway, options);
  const router = express.Router();
  router.use((req, res, next) => {
    void handle(req, res, next);
  });
  return router;
}
