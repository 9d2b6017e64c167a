// A plain node:http server embedding Tollgate under /gateway, next to the app's own routes.
import { createServer } from "node:http";
import { createGateway } from "@tollgate/core";
import { createNodeHandler } from "@tollgate/node";
import { createSqliteStore } from "@tollgate/sqlite";

const gateway = createGateway({ store: createSqliteStore({ filename: process.env.DB ?? "./data/example.db" }) });
const tollgate = createNodeHandler(gateway, { basePath: "/gateway" });

const server = createServer((req, res) => {
  if (req.url === "/health") return void res.end("ok");
  void tollgate(req, res, () => {
    res.writeHead(404).end("not found");
  });
});

server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`example listening on http://127.0.0.1:${port} (gateway under /gateway)`);
});
process.on("SIGTERM", () => server.close(() => void gateway.close()));
