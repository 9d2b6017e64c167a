/**
 * The app's one Tollgate gateway, on SQLite with the offline `local` provider. Created on the
 * first request (so `next build` never opens the database) and kept on `globalThis` so that dev
 * hot reloads reuse the open database instead of leaking a connection per edit.
 *
 * Wallets prove themselves with Sign-In with Ethereum (the dashboard's "Sign in with wallet").
 * `TOLLGATE_INTERNAL_SECRET` (at least 16 characters), when set, also lets a server-side
 * script act for a wallet it names (`x-internal-secret` with `x-session-user-address`); never
 * send it from a browser. `TOLLGATE_AUTH_DOMAINS` (comma-separated hosts) sets the hosts a sign-in
 * message may name; set it to the public host in any deployment others can reach: without it only a
 * loopback Host (localhost, 127.0.0.1) is believed, outside NODE_ENV=production, and sign-in
 * elsewhere answers 503 (a Host any client can set would let a phishing page relay a signature).
 */
import { createGateway, type Gateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";

const holder = globalThis as typeof globalThis & { __tollgateGateway?: Gateway };

/** Returns the process-wide gateway; the database file is `TOLLGATE_DB` (default `./data/tollgate.db`). */
export function getGateway(): Gateway {
  const internalSecret = process.env.TOLLGATE_INTERNAL_SECRET || undefined;
  const domains = (process.env.TOLLGATE_AUTH_DOMAINS ?? "")
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "");
  holder.__tollgateGateway ??= createGateway({
    store: createSqliteStore({ filename: process.env.TOLLGATE_DB ?? "./data/tollgate.db" }),
    ...(internalSecret === undefined ? {} : { internalSecret }),
    ...(domains.length === 0 ? {} : { auth: { domains } }),
  });
  return holder.__tollgateGateway;
}

/**
 * The client's address for the gateway's per-IP limits: the header named by
 * `TOLLGATE_CLIENT_IP_HEADER`, which your reverse proxy must set, overwriting whatever the client
 * sent (nginx: `proxy_set_header X-Real-IP $remote_addr;` and `TOLLGATE_CLIENT_IP_HEADER=x-real-ip`;
 * Vercel sets `x-real-ip` itself). Unset, a route handler knows no client address and the per-IP
 * limits are off: `next start` passes on an `X-Forwarded-For` the client wrote.
 */
export function clientIpOf(request: Request): string | undefined {
  const header = process.env.TOLLGATE_CLIENT_IP_HEADER;
  return header ? (request.headers.get(header) ?? undefined) : undefined;
}
