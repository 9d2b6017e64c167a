// An Express app embedding Tollgate under /gateway, next to the app's own routes.
import { createGateway } from "@tollgate/core";
import { createHandler } from "@tollgate/express";
import { createSqliteStore } from "@tollgate/sqlite";
import express from "express";

const gateway = createGateway({ store: createSqliteStore({ filename: process.env.DB ?? "./data/example.db" }) });
const app = express();
app.get("/health", (_req, res) => void res.send("ok"));
app.use("/gateway", createHandler(gateway));

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`example listening on http://127.0.0.1:${port} (gateway under /gateway)`);
});
process.on("SIGTERM", () => server.close(() => void gateway.close()));
