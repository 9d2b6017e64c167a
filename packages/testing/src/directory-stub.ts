/**
 * A local stand-in for an Agentverse-style directory (`POST /v1/search/agents`) on node:http,
 * port 0. It records every request and answers what the test set with `respond`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";

/** One request the stub received. */
export interface StubRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

/** What the stub answers: a status with a JSON value or raw text, optionally after a delay. */
export interface StubAnswer {
  status?: number;
  json?: unknown;
  raw?: string;
  delayMs?: number;
}

export interface DirectoryStub {
  readonly url: string;
  readonly requests: StubRequest[];
  /** Sets the answer of the following requests. @default 200 `{agents:[], total:0}` */
  respond(answer: StubAnswer): void;
  close(): Promise<void>;
}

/** Starts the stub on 127.0.0.1 with a free port. */
export async function startDirectoryStub(): Promise<DirectoryStub> {
  const requests: StubRequest[] = [];
  let answer: StubAnswer = { json: { agents: [], total: 0 } };
  const handle = (req: IncomingMessage, res: ServerResponse, text: string) => {
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the raw text
    }
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const { status = 200, json, raw, delayMs = 0 } = answer;
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": raw === undefined ? "application/json" : "text/plain" });
      res.end(raw ?? JSON.stringify(json));
    };
    if (delayMs === 0) return send();
    const timer = setTimeout(send, delayMs);
    res.on("close", () => clearTimeout(timer));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond: (a) => {
      answer = a;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A URL on which nothing listens. The port is free when returned and lies below the kernel's
 * ephemeral range, so a server that another test opens on port 0 meanwhile cannot take it (a port
 * from that range, just released, can be handed out again while the test still relies on it).
 */
export async function closedPortUrl(): Promise<string> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 20; attempt++) {
    // Above 10080, the last port fetch refuses as "bad port" (the Fetch standard's list), so the
    // refusal a test sees is always the connection's.
    const port = 10_081 + Math.floor(Math.random() * (low - 10_081));
    if (await isFree(port)) return `http://127.0.0.1:${port}`;
  }
  throw new Error("closedPortUrl: found no free port below the ephemeral range");
}

/** The first port the kernel hands out for port 0 (Linux), else the IANA default. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 49_152;
  } catch {
    return 49_152;
  }
}

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
