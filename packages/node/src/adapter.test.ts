// The Node bridge on a plain node:http server: the gateway under the base path, the app's 404 elsewhere.
import http from "node:http";
import { listenHttp, runAdapterConformance } from "@tollgate/testing";
import { createNodeHandler } from "./bridge.js";

runAdapterConformance("node", {
  start: async (gateway, options) => {
    const handler = createNodeHandler(gateway, options);
    const server = http.createServer((req, res) => void handler(req, res, () => res.writeHead(404).end("not found")));
    return listenHttp(server);
  },
});
