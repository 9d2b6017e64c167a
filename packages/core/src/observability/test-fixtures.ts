/**
 * Test helpers of the observability tests (not part of the package build): a real local HTTP
 * upstream, a key, a paid call, a reader of the Prometheus text format, and a pino destination
 * that keeps the lines it is given.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";

export const OWNER = "0x00000000000000000000000000000000000000a1";

/** A local HTTP server answering every request with `answer`; counts the requests it received. */
export interface Upstream {
  readonly url: string;
  readonly requests: { method: string; url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/** Starts a {@link Upstream} on a free loopback port. */
export async function startUpstream(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Upstream> {
  const requests: Upstream["requests"] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    req.on("end", () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with `status` and a small JSON body. */
export const answerWith =
  (status: number, body: unknown = { error: { message: `status ${status}` } }) =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

/** Creates an api key of {@link OWNER} on chain 8453 with `budget` atomic units; returns its id and token. */
export async function createKey(gateway: Gateway<GatewayServices>, budget: bigint): Promise<{ keyId: string; token: string }> {
  const { key, token } = await gateway.services.keys.create({
    owner: OWNER,
    chainId: 8453,
    purpose: "api",
    budgetLimit: budget,
    expiresAt: Date.now() + 3_600_000,
  });
  return { keyId: key.keyId, token };
}

/** `POST /v1/embeddings` of `model` with a bearer token. */
export function embed(
  gateway: Pick<Gateway, "fetch">,
  token: string | undefined,
  model = "text-embedding-3-small",
  headers: Record<string, string> = {},
): Promise<Response> {
  return gateway.fetch(
    new Request("http://gateway.test/v1/embeddings", {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify({ model, input: "the quick brown fox" }),
    }),
  );
}

/** `GET path` through the gateway. */
export const get = (gateway: Pick<Gateway, "fetch">, path: string, headers: Record<string, string> = {}) =>
  gateway.fetch(new Request(`http://gateway.test${path}`, { headers }));

/**
 * The value of one sample in Prometheus text: `name` with exactly the given labels (a label not
 * named must not be there, except `le` on buckets when given). Undefined when absent.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    const want = Object.entries(labels);
    if (want.length === Object.keys(found).length && want.every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** A pino destination that keeps each line it is written, parsed. */
export function lineSink(): { write(line: string): void; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
}
