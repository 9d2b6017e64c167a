// A Fastify app embedding Tollgate under /gateway (an encapsulated plugin), next to its own routes.
import { createGateway } from "@tollgate/core";
import { createHandler } from "@tollgate/fastify";
import { createSqliteStore } from "@tollgate/sqlite";
import Fastify from "fastify";

const gateway = createGateway({ store: createSqliteStore({ filename: process.env.DB ?? "./data/example.db" }) });
const app = Fastify();
app.get("/health", async () => "ok");
await app.register(createHandler(gateway), { prefix: "/gateway" });

const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: "127.0.0.1" });
console.log(`example listening on ${url} (gateway under /gateway)`);
process.on("SIGTERM", () => void app.close().then(() => gateway.close()));
