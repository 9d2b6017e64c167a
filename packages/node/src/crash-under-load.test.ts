/**
 * Crash safety of the money path: the real `tollgate serve` process on a SQLite file (and on
 * PostgreSQL with DATABASE_URL set, whose ledger writes commit in groups) is killed with SIGKILL
 * under load, several times over the same database. Every call the server acknowledged (a 200
 * with its receipt) must be in the ledger exactly once at the receipt's amount, nothing may be
 * charged twice, and the reservations of the calls cut mid-flight must come back once their TTL
 * passes. The ledger is read after the last kill through the store's public methods only.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChargeRecord, IntentCursor, IntentRecord, Store } from "@tollgate/core";
import { createPostgresStore } from "@tollgate/postgres";
import { createSqliteStore } from "@tollgate/sqlite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "./testing/cli-process.js";

const ROUNDS = 5;
const CONCURRENCY = 16;
const SECRET = "crash-secret-0123456789";
const WALLET = "0x00000000000000000000000000000000c0ffee01";
const CHAIN_ID = 8453;
const BUDGET = 10n ** 15n;
/** 1000 UTF-8 bytes: the reservation is priced on 1000 tokens; the stub reports 1..1000, so amounts vary per call. */
const INPUT = "a".repeat(1000);
const CONNECTION_ERRORS = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"]);

/** The outcome of one embeddings call. */
type Outcome =
  | { kind: "ack"; intentId: string; amount: bigint }
  | { kind: "status"; status: number; body: string }
  | { kind: "error"; code: string; message: string };

/** A real upstream: OpenAI's embeddings answer after 0–5 ms, with a random token count up to the input's bytes. */
function startStub(): Promise<{ server: Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      calls++;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { input?: string | string[] };
      const bytes = [body.input ?? ""].flat().reduce((n, s) => n + Buffer.byteLength(s), 0);
      const tokens = 1 + Math.floor(Math.random() * Math.max(1, bytes));
      const answer = JSON.stringify({
        object: "list",
        data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
        model: "text-embedding-3-small",
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(200, { "content-type": "application/json" }).end(answer);
      }, Math.floor(Math.random() * 6));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls })),
  );
}

/** The charged amount and intent of a 200 answer: the `x-receipt` header first, else the body's `receipt`. */
function acknowledged(headers: Record<string, string | string[] | undefined>, text: string): Outcome {
  const header = headers["x-receipt"];
  const receipt = (typeof header === "string" ? JSON.parse(Buffer.from(header, "base64url").toString("utf8")) : (JSON.parse(text) as { receipt?: unknown }).receipt) as
    | { finalAmountWei?: string; paymentIntentId?: string }
    | undefined;
  const intentHeader = headers["x-payment-intent-id"];
  const intentId = typeof intentHeader === "string" ? intentHeader : receipt?.paymentIntentId;
  if (!receipt?.finalAmountWei || !intentId) return { kind: "status", status: 200, body: `no receipt or intent id: ${text.slice(0, 300)}` };
  if (receipt.paymentIntentId !== undefined && receipt.paymentIntentId !== intentId)
    return { kind: "status", status: 200, body: `receipt names intent ${receipt.paymentIntentId}, header ${intentId}` };
  return { kind: "ack", intentId, amount: BigInt(receipt.finalAmountWei) };
}

/** One `POST /v1/embeddings` billed to `token`; an answer counts as acknowledged only once its whole body arrived. */
function embed(url: string, token: string, agent: Agent | false): Promise<Outcome> {
  const payload = JSON.stringify({ model: "text-embedding-3-small", input: INPUT });
  return new Promise((resolve) => {
    const req = request(
      `${url}/v1/embeddings`,
      { method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (e: NodeJS.ErrnoException) => resolve({ kind: "error", code: e.code ?? "ERR", message: e.message }));
        res.on("aborted", () => resolve({ kind: "error", code: "ECONNRESET", message: "response aborted" }));
        res.on("end", () => {
          if (!res.complete) return resolve({ kind: "error", code: "ECONNRESET", message: "response cut" });
          const text = Buffer.concat(chunks).toString("utf8");
          resolve(res.statusCode === 200 ? acknowledged(res.headers, text) : { kind: "status", status: res.statusCode ?? 0, body: text.slice(0, 300) });
        });
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ kind: "error", code: e.code ?? "ERR", message: e.message }));
    req.end(payload);
  });
}

/** Every intent of the key, through the paged public listing. */
async function allIntents(store: Store, keyId: string): Promise<IntentRecord[]> {
  const out: IntentRecord[] = [];
  let cursor: IntentCursor | undefined;
  for (;;) {
    const page = await store.listIntents(WALLET, { limit: 500, keyId, ...(cursor ? { cursor } : {}) });
    out.push(...page.intents);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

const sum = (xs: readonly bigint[]) => xs.reduce((a, b) => a + b, 0n);
const show = (o: Outcome) => JSON.stringify(o, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));

/** A database the server runs on: its `--db` arguments, and the store that reads the ledger afterwards. */
interface Backend {
  name: string;
  args: string[];
  open(): Promise<Store>;
  drop(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), "tollgate-crash-"));
const backends: Backend[] = [{ name: "SQLite file", args: ["--db", join(dir, "crash.db")], open: async () => createSqliteStore({ filename: join(dir, "crash.db") }), drop: async () => {} }];
const pgUrl = process.env.DATABASE_URL;
if (pgUrl) {
  const schema = `crash_${process.pid}_${Date.now().toString(36)}`;
  backends.push({
    name: "PostgreSQL, group commit",
    args: ["--db", pgUrl, "--db-schema", schema],
    open: () => createPostgresStore({ connectionString: pgUrl, schema }),
    drop: async () => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    },
  });
} else if (process.env.CI) {
  it("SIGKILL under load on PostgreSQL needs a server", () => {
    throw new Error("DATABASE_URL is not set, and CI must run the PostgreSQL tests: export DATABASE_URL=$(.ci/postgres-start)");
  });
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const backend of backends) describe(`SIGKILL under load (real server process, ${backend.name})`, () => {
  const children: CliProcess[] = [];
  let stub: Awaited<ReturnType<typeof startStub>> | undefined;

  afterAll(async () => {
    for (const child of children) {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill("SIGKILL");
      await child.exited;
    }
    await new Promise((r) => (stub ? stub.server.close(r) : r(undefined)));
    await backend.drop();
  });

  const startServer = async (configFile: string) => {
    const server = startCli(["serve", "--port", "0", ...backend.args, "--config", configFile], { TOLLGATE_INTERNAL_SECRET: SECRET });
    children.push(server);
    return { server, url: await server.url() };
  };

  it(`${ROUNDS} kills with ${CONCURRENCY} calls in flight: no acknowledged charge lost or doubled, reservations come back`, async () => {
    stub = await startStub();
    const configFile = join(dir, `gateway-${backends.indexOf(backend)}.json`);
    writeFileSync(configFile, JSON.stringify({ media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stub.url}/v1`, apiKey: "sk-test" } } } }));

    const acks = new Map<string, bigint>();
    const doubled: string[] = [];
    const ack = (o: Extract<Outcome, { kind: "ack" }>) => {
      if (acks.has(o.intentId)) doubled.push(o.intentId);
      acks.set(o.intentId, o.amount);
    };
    const unexpected: Outcome[] = [];
    let sent = 0;
    let keyId = "";
    let token = "";
    const rounds: { acked: number; cut: number; failed: number; delayMs: number }[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      const { server, url } = await startServer(configFile);
      if (round === 0) {
        const created = await fetch(`${url}/api/keys`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-session-user-address": WALLET, "x-internal-secret": SECRET },
          body: JSON.stringify({ budgetLimit: BUDGET.toString(), expiresAt: Date.now() + 7 * 86_400_000, networkId: CHAIN_ID, purpose: "api", name: "crash" }),
        });
        const body = (await created.json()) as { keyId: string; token: string };
        expect(created.status, JSON.stringify(body)).toBe(201);
        ({ keyId, token } = body);
      }
      // The server answers before the load starts (and after every restart on the crashed file).
      sent++;
      const probe = await embed(url, token, false);
      expect(probe, `round ${round} probe: ${show(probe)}\n${server.err()}`).toMatchObject({ kind: "ack" });
      ack(probe as Extract<Outcome, { kind: "ack" }>);

      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      let killed = false;
      let inFlight = 0;
      let acked = 0;
      let failed = 0;
      const worker = async () => {
        while (!killed) {
          sent++;
          inFlight++;
          const outcome = await embed(url, token, agent);
          inFlight--;
          if (outcome.kind === "ack") {
            ack(outcome);
            acked++;
          } else if (outcome.kind === "error" && killed && CONNECTION_ERRORS.has(outcome.code)) failed++;
          else unexpected.push(outcome);
        }
      };
      const workers = Array.from({ length: CONCURRENCY }, worker);
      const started = Date.now();
      while (acked === 0 && unexpected.length === 0 && Date.now() - started < 15_000) await sleep(5);
      const delayMs = 200 + Math.floor(Math.random() * 600);
      await sleep(delayMs);
      const cut = inFlight;
      server.child.kill("SIGKILL");
      killed = true;
      await server.exited;
      await Promise.all(workers);
      agent.destroy();
      expect(server.child.signalCode, `round ${round}: the server died of the kill, not on its own\n${server.err()}`).toBe("SIGKILL");
      rounds.push({ acked, cut, failed, delayMs });
    }

    console.log(`crash-under-load rounds: ${JSON.stringify(rounds)}; sent ${sent}, acknowledged ${acks.size}, upstream calls ${stub.calls()}`);
    expect(unexpected.map(show), "every answer is a 200 with its receipt; failures are connection errors after a kill").toEqual([]);
    expect(doubled, "an intent id acknowledged twice").toEqual([]);
    for (const r of rounds) expect(r.acked).toBeGreaterThan(0);
    expect(rounds.some((r) => r.cut > 0 && r.failed > 0), "some kill cut calls in flight").toBe(true);

    // The ledger after the last kill, read without restarting the server.
    const store = await backend.open();
    let usedAfterCrashes: bigint;
    try {
      const charges: ChargeRecord[] = await store.listQueuedCharges({ limit: 1_000_000 });
      const intents = await allIntents(store, keyId);
      const chargeByIntent = new Map<string, ChargeRecord>();
      const chargedTwice: string[] = [];
      for (const c of charges) {
        expect(c).toMatchObject({ keyId, owner: WALLET, chainId: CHAIN_ID, status: "queued" });
        expect(c.intentId, `charge ${c.chargeId} names its intent`).toBeDefined();
        if (chargeByIntent.has(c.intentId!)) chargedTwice.push(c.intentId!);
        chargeByIntent.set(c.intentId!, c);
      }
      expect(chargedTwice, "intents with two charges").toEqual([]);

      // Every acknowledged call: settled at the receipt's amount, with exactly one charge of that amount.
      const lost: string[] = [];
      const wrong: string[] = [];
      for (const [intentId, amount] of acks) {
        const intent = await store.getIntent(intentId);
        const charge = chargeByIntent.get(intentId);
        if (intent?.status !== "settled" || !charge) lost.push(`${intentId}: ${intent?.status ?? "missing"}, charge ${charge ? charge.amount : "none"}`);
        else if (intent.finalAmount !== amount || charge.amount !== amount) wrong.push(`${intentId}: receipt ${amount}, intent ${intent.finalAmount}, charge ${charge.amount}`);
      }
      expect(lost, "acknowledged calls missing from the ledger").toEqual([]);
      expect(wrong, "acknowledged calls charged another amount").toEqual([]);

      // Every charge belongs to one settled intent at its final amount, and every settled intent has its charge.
      const byId = new Map(intents.map((i) => [i.intentId, i]));
      for (const c of charges) expect(byId.get(c.intentId!), `charge ${c.chargeId}`).toMatchObject({ status: "settled", finalAmount: c.amount });
      const settled = intents.filter((i) => i.status === "settled");
      expect(settled.map((i) => i.intentId).sort()).toEqual([...chargeByIntent.keys()].sort());

      const key = (await store.getKeyById(keyId))!;
      const charged = sum(charges.map((c) => c.amount));
      expect(key.budgetUsed).toBe(charged);
      const authorized = intents.filter((i) => i.status === "authorized");
      expect(key.budgetReserved).toBe(sum(authorized.map((i) => i.maxAmount)));
      expect(acks.size).toBeLessThanOrEqual(charges.length);
      expect(charges.length).toBeLessThanOrEqual(stub.calls());
      expect(intents.length).toBeLessThanOrEqual(sent);
      console.log(`ledger after ${ROUNDS} kills: ${intents.length} intents (${settled.length} settled, ${authorized.length} still reserved, ${key.budgetReserved} atomic units), ${charges.length} charges, used ${key.budgetUsed}`);

      // The intent TTL passes: every reservation left by a cut call comes back; the spend stays.
      const expired = await store.expireIntents(Date.now() + 86_400_000, 1_000_000);
      expect(expired).toBe(authorized.length);
      const after = (await store.getKeyById(keyId))!;
      expect(after.budgetReserved).toBe(0n);
      expect(after.budgetUsed).toBe(charged);
      expect(await store.listQueuedCharges({ limit: 1_000_000 })).toHaveLength(charges.length);
      usedAfterCrashes = after.budgetUsed;
    } finally {
      await store.close();
    }

    // The crashed file still serves: one more call is charged once, on top of the spend above.
    const { server, url } = await startServer(configFile);
    const last = await embed(url, token, false);
    expect(last, `after the crashes: ${show(last)}\n${server.err()}`).toMatchObject({ kind: "ack" });
    expect(await server.stop()).toBe(0);
    const reopened = await backend.open();
    try {
      const { intentId, amount } = last as Extract<Outcome, { kind: "ack" }>;
      expect(await reopened.getIntent(intentId)).toMatchObject({ status: "settled", finalAmount: amount });
      expect(await reopened.getKeyById(keyId)).toMatchObject({ budgetUsed: usedAfterCrashes + amount, budgetReserved: 0n });
      expect((await reopened.listQueuedCharges({ limit: 1_000_000 })).filter((c) => c.intentId === intentId).map((c) => c.amount)).toEqual([amount]);
    } finally {
      await reopened.close();
    }
  }, 120_000);
});
