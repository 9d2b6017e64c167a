/** The client IP of a request, for the per-IP rate limits. */
import { isIP } from "node:net";
import type { GatewayRequest } from "./types.js";

/**
 * The client's address: with `trustedProxies = n > 0`, the n-th entry from the right of
 * `X-Forwarded-For` (each trusted proxy appends its peer; entries further left are the client's
 * to forge); else, or when the header has fewer entries or that entry is not an IP address, the
 * socket peer. A port on an entry (`203.0.113.7:50001`, `[2001:db8::1]:443`, as some proxies
 * write) is dropped, so that a client's connections share one address. IPv4-mapped IPv6 is
 * unwrapped, and IPv6 is reduced to its /64 (one subscriber usually holds a whole /64).
 * Undefined when the adapter knows no peer address (or not a valid one) and no proxy header applies.
 */
export function clientIp(req: Pick<GatewayRequest, "headers" | "remoteAddress">, trustedProxies: number): string | undefined {
  if (trustedProxies > 0) {
    const hops = (req.headers["x-forwarded-for"] ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const forwarded = hops.length >= trustedProxies ? addressOf(hops[hops.length - trustedProxies]!) : undefined;
    if (forwarded !== undefined) return forwarded;
  }
  return req.remoteAddress === undefined ? undefined : addressOf(req.remoteAddress);
}

/** The rate-limit subject of one address as written (a port and an IPv6 zone dropped); undefined when it is not an IP address. */
function addressOf(written: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(written);
  const withoutPort = bracketed ? bracketed[1]! : (/^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(written)?.[1] ?? written);
  const ip = withoutPort.split("%")[0]!;
  const family = isIP(ip);
  if (family === 0) return undefined;
  return family === 4 ? ip : normalize6(ip);
}

function normalize6(ip: string): string {
  const v4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (v4) return v4[1]!;
  const [head = "", tail = ""] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
