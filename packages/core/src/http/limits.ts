/** The pipeline's rate-limit steps: per client IP on credential-free routes, per owner wallet, per service key. */
import type { GatewayContext } from "../context.js";
import { clientIp } from "./client-ip.js";
import { rateLimited, rateLimitHeaders } from "./rate-limit.js";
import type { AnyRoute } from "./route.js";
import type { GatewayRequest } from "./types.js";

/**
 * Counts the request against its route's IP group, if it has one. Returns the `x-ratelimit-*`
 * headers to add to the answer; throws 429 when the window is used up. A request whose client IP
 * is unknown (an adapter without a socket and no trusted proxy) is not counted.
 */
export function limitByIp(route: AnyRoute, req: GatewayRequest, ctx: GatewayContext): Record<string, string> {
  const group = route.rateLimit?.ip;
  const perMinute = group ? ctx.rateLimits.perIp[group] : undefined;
  if (!group || perMinute === undefined) return {};
  const ip = clientIp(req, ctx.rateLimits.trustedProxies);
  if (ip === undefined) return {};
  const now = ctx.clock.now();
  const decision = ctx.rateLimits.limiter.hit(`ip:${group}:${ip}`, perMinute);
  if (!decision.allowed) throw rateLimited(decision, now, `${group} requests from ${ip}`);
  return rateLimitHeaders(decision, now);
}

/** Counts the request against the key its credential resolved to (its own limit, else the gateway default). */
export function limitByKey(route: AnyRoute, auth: unknown, ctx: GatewayContext): Record<string, string> {
  const key = route.rateLimit?.key?.(auth);
  const perMinute = key?.rateLimit?.requestsPerMinute ?? ctx.rateLimits.keyDefault;
  if (!key || perMinute === undefined) return {};
  const now = ctx.clock.now();
  const decision = ctx.rateLimits.limiter.hit(`key:${key.keyId}`, perMinute);
  if (!decision.allowed) throw rateLimited(decision, now, `key ${key.keyId}`);
  return rateLimitHeaders(decision, now);
}

/**
 * Counts the request against the owner wallet its route names, in the route's wallet group (after
 * the credential is resolved, so only a proven wallet is counted).
 */
export function limitByWallet(route: AnyRoute, auth: unknown, ctx: GatewayContext): Record<string, string> {
  const limit = route.rateLimit?.wallet;
  if (!limit) return {};
  const perMinute = ctx.rateLimits.perWallet[limit.group];
  const address = perMinute === undefined ? undefined : limit.of(auth);
  if (perMinute === undefined || address === undefined) return {};
  const now = ctx.clock.now();
  const decision = ctx.rateLimits.limiter.hit(`wallet:${limit.group}:${address}`, perMinute);
  if (!decision.allowed) throw rateLimited(decision, now, `${limit.group} writes of wallet ${address}`);
  return rateLimitHeaders(decision, now);
}

/**
 * Counts `bytes` of chat prompt about to be tokenized, before anybody has paid for the call,
 * against a minute of `rateLimits.unpaidChatBytes`: the client IP's, or with `owner` (a service
 * key's call) its owner wallet's, whatever key or IP it uses. `fit`: throws 429 when they do not
 * fit; `refund`: gives them back once the call was billed. A request without a key whose client IP
 * is unknown is not counted.
 */
export function limitUnpaidTokenizing(req: GatewayRequest, ctx: GatewayContext, bytes: number, mode: "fit" | "refund", owner?: string): void {
  const perMinute = ctx.rateLimits.unpaidChatBytes;
  if (perMinute === undefined || bytes === 0) return;
  const ip = owner === undefined ? clientIp(req, ctx.rateLimits.trustedProxies) : undefined;
  const who = owner === undefined ? ip : `wallet ${owner}`;
  if (who === undefined) return;
  // Per IP and per wallet are two kinds of subject: a flood of new IPs never forgets a wallet's window.
  const subject = owner === undefined ? `unpaid-chat-ip:${ip}` : `unpaid-chat-wallet:${owner}`;
  const decision = ctx.rateLimits.limiter.hit(subject, perMinute, undefined, bytes, mode);
  if (!decision.allowed)
    throw rateLimited(
      decision,
      ctx.clock.now(),
      `chat prompts not yet paid for from ${who} (wait for calls in flight to be billed, or send less)`,
      "prompt bytes",
    );
}
