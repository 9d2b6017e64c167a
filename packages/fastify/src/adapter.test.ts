// Fastify registers the plugin under the base path as its prefix, next to an app route.
import { runAdapterConformance } from "@tollgate/testing";
import Fastify from "fastify";
import { createHandler } from "./index.js";

runAdapterConformance("fastify", {
  start: async (gateway, { basePath, ...options }) => {
    const app = Fastify();
    app.get("/health", async () => "ok");
    await app.register(createHandler(gateway, options), { prefix: basePath });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    return {
      url,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  },
});
