/**
 * The upstream of the media benchmarks, as its own process: a keep-alive node:http server
 * answering every request with OpenAI's embeddings JSON (usage 9 tokens; 8 dimensions keep JSON
 * work out of the comparison). Prints `{"url"}`; exits when its stdin closes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveParent } from "./lib.js";

const answer = JSON.stringify({
  object: "list",
  data: [{ object: "embedding", index: 0, embedding: [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8] }],
  model: "text-embedding-3-small",
  usage: { prompt_tokens: 9, total_tokens: 9 },
});
const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(answer) };
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, headers).end(answer));
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, () => ({}));
});
