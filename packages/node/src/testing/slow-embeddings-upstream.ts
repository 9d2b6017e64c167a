/** A node:http stand-in for OpenAI embeddings that answers each request a while after it arrived. */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The running stub: its base URL (with `/v1`), a wait for the next request to arrive in full, and how to stop it. */
export interface SlowEmbeddingsUpstream {
  readonly baseUrl: string;
  /** Resolves when the next request has arrived in full (before its answer). */
  nextArrival(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the stub on a free loopback port; each answer (one 2-dimension vector, 3 prompt tokens) comes `delayMs` after its request. */
export async function startSlowEmbeddingsUpstream(delayMs: number): Promise<SlowEmbeddingsUpstream> {
  let arrived: () => void = () => {};
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrived();
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
            model: "text-embedding-3-small",
            usage: { prompt_tokens: 3, total_tokens: 3 },
          }),
        );
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    nextArrival: () => new Promise<void>((r) => (arrived = r)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
