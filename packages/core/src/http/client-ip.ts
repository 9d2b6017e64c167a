/** The client IP of a request, for the per-IP rate limits. */
import type { GatewayRequest } from "./types.js";

/**
 * The client's address: with `trustedProxies = n > 0`, the n-th entry from the right of
 * `X-Forwarded-For` (each trusted proxy appends its peer; entries further left are the client's
 * to forge); else, or when the header has fewer entries, the socket peer. IPv4-mapped IPv6 is
 * unwrapped, and IPv6 is reduced to its /64 (one subscriber usually holds a whole /64).
 * Undefined when the adapter knows no peer address and no proxy header applies.
 */
export function clientIp(req: Pick<GatewayRequest, "headers" | "remoteAddress">, trustedProxies: number): string | undefined {
  let ip = req.remoteAddress;
  if (trustedProxies > 0) {
    const hops = (req.headers["x-forwarded-for"] ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    if (hops.length >= trustedProxies) ip = hops[hops.length - trustedProxies];
  }
  return ip === undefined || ip === "" ? undefined : normalize(ip);
}

function normalize(ip: string): string {
  const v4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (v4) return v4[1]!;
  if (!ip.includes(":")) return ip;
  const [head = "", tail = ""] = ip.toLowerCase().replace(/^\[|\]$/g, "").split("%")[0]!.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
