/**
 * Test harness of the client's tests (not exported by the package): a real gateway served on a
 * port by `@tollgate/node` over a SQLite file with a manual clock, a fetch that records what the
 * client sent, and scripted local HTTP servers for the answers a gateway never gives.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway, createManualClock, type Gateway, type GatewayOptions, type GatewayServices, type ManualClock } from "@tollgate/core";
import { serve } from "@tollgate/node";
import { createSqliteStore } from "@tollgate/sqlite";
import { keccak256, toHex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { createTollgateClient, type ClientOptions, type FetchLike, type SignedIn, type TollgateClient } from "../index.js";

export const CHAIN = 8453;
export const DAY = 86_400_000;

/** A fresh random wallet address (lower-case), for a wallet that never signs. */
export const wallet = (): string => `0x${randomBytes(20).toString("hex")}`;

let accounts = 0;
/**
 * A fresh wallet with a private key (viem local account): the n-th call of this test file gets
 * the key keccak256("tollgate client test wallet <n>"), so runs are repeatable.
 */
export function testAccount(): PrivateKeyAccount {
  return privateKeyToAccount(keccak256(toHex(`tollgate client test wallet ${++accounts}`)));
}

/** A client signed in as a wallet: its `sessionToken` proves `address` on the wallet routes. */
export type SignedInClient = TollgateClient & {
  calls: Seen[];
  account: PrivateKeyAccount;
  /** The wallet, lower-case. */
  address: string;
  session: SignedIn;
};

/** One request as the recording fetch or a stub saw it. */
export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch that records every request the client makes, then sends it with the global fetch. */
export function recordingFetch(): { fetch: FetchLike; calls: Seen[] } {
  const calls: Seen[] = [];
  return {
    calls,
    fetch: (url, init) => {
      calls.push({ method: init.method ?? "GET", url, headers: { ...(init.headers as Record<string, string>) }, body: typeof init.body === "string" ? init.body : undefined });
      return fetch(url, init);
    },
  };
}

/** A gateway served on 127.0.0.1 with a port of its own. */
export interface TestGateway {
  readonly url: string;
  readonly gateway: Gateway<GatewayServices>;
  readonly clock: ManualClock;
  /** A client of this gateway; `calls` records what it sent. */
  client(options?: Partial<ClientOptions>): TollgateClient & { calls: Seen[] };
  /**
   * A client (default `networkId` {@link CHAIN}) signed in with SIWE as `account` (default a fresh
   * {@link testAccount}); the message is issued at the gateway's clock. `calls` starts empty.
   */
  signedIn(options?: Partial<ClientOptions>, account?: PrivateKeyAccount): Promise<SignedInClient>;
  close(): Promise<void>;
}

/** Starts a gateway over a fresh SQLite file; `extra` may read the manual clock. */
export async function startGateway(extra: Partial<GatewayOptions> | ((clock: ManualClock) => Partial<GatewayOptions>) = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-client-"));
  const clock = createManualClock();
  const options = typeof extra === "function" ? extra(clock) : extra;
  const gateway = createGateway({ store: createSqliteStore({ filename: join(dir, "gw.db") }), clock, sweepIntervalMs: 0, video: { pollerIntervalMs: 0 }, ...options });
  const running = await serve(gateway, { port: 0 });
  const client = (options: Partial<ClientOptions> = {}) => {
    const recorder = recordingFetch();
    return Object.assign(createTollgateClient({ baseUrl: running.url, fetch: recorder.fetch, ...options }), { calls: recorder.calls });
  };
  return {
    url: running.url,
    gateway,
    clock,
    client,
    async signedIn(options = {}, account = testAccount()) {
      const signer = client({ networkId: CHAIN, ...options });
      const session = await signer.auth.signIn({
        address: account.address,
        chainId: Number(options.networkId ?? CHAIN),
        signMessage: (message) => account.signMessage({ message }),
        issuedAt: new Date(clock.now()),
      });
      signer.calls.length = 0;
      return Object.assign(signer, { account, address: account.address.toLowerCase(), session });
    },
    async close() {
      await running.close({ graceMs: 200 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What a stub answers: a status with JSON or text and headers — or only the first half of that
 * body, then `"stall"` (never the rest) or `"cut"` (the connection dropped); `"hang"` never
 * answers; `"destroy"` drops the connection at once.
 */
export type StubReply = { status: number; headers?: Record<string, string>; json?: unknown; text?: string; half?: "stall" | "cut" } | "hang" | "destroy";

/** A scripted local HTTP server. */
export interface Stub {
  readonly url: string;
  readonly requests: Seen[];
  close(): Promise<void>;
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

function reply(res: ServerResponse, answer: Exclude<StubReply, "hang">): void {
  if (answer === "destroy") return void res.socket?.destroy();
  const text = answer.json === undefined ? (answer.text ?? "") : JSON.stringify(answer.json);
  res.writeHead(answer.status, { "content-type": answer.json === undefined ? "text/plain" : "application/json", "content-length": String(Buffer.byteLength(text)), ...answer.headers });
  if (answer.half === undefined) return void res.end(text);
  res.write(text.slice(0, Math.floor(text.length / 2)));
  if (answer.half === "cut") setTimeout(() => res.socket?.destroy(), 20);
}

/** Starts a stub whose `handler` answers request number `index` (0-based); it may be async (e.g. forward to a gateway). */
export async function startStub(handler: (request: Seen, index: number) => StubReply | Promise<StubReply>): Promise<Stub> {
  const requests: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const seen: Seen = { method: req.method ?? "", url: req.url ?? "", headers: flatten(req.headers), body: chunks.length ? Buffer.concat(chunks).toString("utf8") : undefined };
      requests.push(seen);
      void Promise.resolve(handler(seen, requests.length - 1)).then((answer) => {
        if (answer !== "hang") reply(res, answer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { closedPortUrl } from "@tollgate/testing";

/** Runs `fn` and returns what it threw (fails when it does not throw). */
export async function thrown(fn: () => unknown): Promise<any> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
