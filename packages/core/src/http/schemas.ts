/** zod building blocks shared by the route schemas of every capability. */
import { z } from "zod";
import { checkAmount } from "../money.js";
import { addressProblem } from "../validation.js";

/** An EVM address (see {@link addressProblem}), returned lower-case. */
export const addressSchema = z
  .string({ error: "is required (a 0x-prefixed 20-byte EVM address)" })
  .trim()
  .superRefine((v, ctx) => {
    const problem = addressProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform((v) => v.toLowerCase());

/**
 * An integer query/body parameter that is clamped rather than rejected: out of
 * range → the nearest bound; missing, empty or not a number → `def`. Never a 400: a list still
 * answers with its default page size.
 */
export function clampedInt(def: number, min: number, max: number) {
  return z
    .unknown()
    .optional()
    .transform((v) => {
      const n = typeof v === "number" ? v : typeof v === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : Number.NaN;
      return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.trunc(n))) : def;
    })
    .meta({ description: `integer, clamped to ${min}..${max}; default ${def} (also for a non-number)`, anyOf: [{ type: "integer" }, { type: "string" }] });
}

/** A non-empty trimmed string of at most `max` characters; empty means "not given". */
export function optionalText(max: number) {
  return z
    .string()
    .max(max)
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
}

/** A USDC amount in atomic units (digits string or safe integer) parsed to bigint. */
export function amount(options: { allowZero?: boolean } = {}) {
  return z.unknown().transform((value, ctx): bigint => {
    if (value === undefined || value === null) {
      ctx.addIssue({ code: "custom", message: "is required" });
      return z.NEVER;
    }
    const r = checkAmount(value, options.allowZero ?? false);
    if (typeof r === "string") {
      ctx.addIssue({ code: "custom", message: r });
      return z.NEVER;
    }
    return r;
  }).meta({
    description: "USDC atomic units (6 decimals): a digits string, or a safe integer",
    anyOf: [{ type: "string", pattern: "^\\d{1,78}$" }, { type: "integer", minimum: options.allowZero ? 0 : 1 }],
  });
}

/** Unix milliseconds as a number or digits string. */
export const unixMs = z.union([z.number().int().positive().max(8.64e15), z.string().regex(/^\d{1,16}$/, "must be Unix milliseconds").transform(Number)]);

/** A chain id as a positive integer or digits string. */
export const chainIdInput = z.union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().trim().regex(/^\d{1,15}$/, "must be a positive integer chain id").transform(Number)]).refine((n) => n > 0, "must be a positive integer chain id");
