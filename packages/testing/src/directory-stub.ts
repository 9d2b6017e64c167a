/**
 * A local stand-in for an Agentverse-style directory (`POST /v1/search/agents`) on node:http,
 * port 0. It records every request and answers what the test set with `respond`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
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

/** A URL on which nothing listens (a port that was just released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
