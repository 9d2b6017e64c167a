/** A JSON-RPC proxy that loses, drops or garbles the answers of a real node, for the tests of chain writes. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The faults still to inject (each a count of sends or lookups), and the sends forwarded so far. */
export interface RpcProxyState {
  lose: number;
  drop: number;
  rpcError: number;
  resend: number;
  lag: number;
  /** Receipt lookups (`eth_getTransactionReceipt`) still to answer with null: a node a block behind. */
  lagReceipts: number;
  forwarded: number;
}

/** Runs `run` (once) before the first request whose JSON-RPC body `match`es is forwarded. */
export interface RpcHook {
  match(body: string): boolean;
  run(): Promise<void>;
}

/** A running proxy: its URL, the faults to inject (set them before a write), hooks, and `close`. */
export interface RpcProxy {
  readonly url: string;
  readonly state: RpcProxyState;
  readonly hooks: RpcHook[];
  close(): Promise<void>;
}

/**
 * A JSON-RPC proxy in front of anvil. For the next sends: `lose` forwards and answers 502; `drop`
 * answers 502 unforwarded; `rpcError` forwards and answers a JSON-RPC -32000 "request timed out";
 * `resend` forwards twice (a provider retrying on another of its nodes) and answers the second
 * ("nonce too low": the first took the nonce). `lag` answers that many hash lookups with null (a
 * load-balanced RPC whose other nodes do not show the transaction yet); `lagReceipts` the same for
 * receipts. A hook runs before the first request it matches is handled.
 */
export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const state: RpcProxyState = { lose: 0, drop: 0, rpcError: 0, resend: 0, lag: 0, lagReceipts: 0, forwarded: 0 };
  const hooks: RpcHook[] = [];
  const forward = async (body: string) => {
    const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    return { status: upstream.status, text: await upstream.text() };
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = (JSON.parse(body) as { id?: unknown }).id;
      const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      const hook = hooks.findIndex((h) => h.match(body));
      if (hook >= 0) await hooks.splice(hook, 1)[0]!.run();
      if (body.includes("eth_getTransactionReceipt") && state.lagReceipts > 0) {
        state.lagReceipts--;
        return void json({ jsonrpc: "2.0", id, result: null });
      }
      if (body.includes("eth_getTransactionByHash") && state.lag > 0) {
        state.lag--;
        return void json({ jsonrpc: "2.0", id, result: null });
      }
      const send = body.includes("eth_sendRawTransaction");
      if (send && state.drop > 0) {
        state.drop--;
        return void res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      }
      let answer = await forward(body);
      if (send) state.forwarded++;
      if (send && state.lose > 0) {
        state.lose--;
        return void res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      }
      if (send && state.rpcError > 0) {
        state.rpcError--;
        return void json({ jsonrpc: "2.0", id, error: { code: -32000, message: "request timed out" } });
      }
      if (send && state.resend > 0) {
        state.resend--;
        answer = await forward(body);
      }
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, state, hooks, close: () => new Promise<void>((r) => server.close(() => r())) };
}
