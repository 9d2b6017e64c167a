/** zod parsing that fails with the gateway's 400 envelope error. */
import type { z } from "zod";
import { isAddress } from "viem";
import { invalidRequest, type GatewayError } from "./errors.js";

/** Turns zod issues into one 400 naming the first offending field and listing all of them. */
export function zodError(error: z.ZodError, where: "body" | "query" | "path"): GatewayError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  const first = issues[0];
  const message = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return invalidRequest(`Invalid ${where}: ${message}`, first?.path || undefined, { issues });
}

/** Parses `value` with `schema`, throwing a 400 envelope error on failure. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, where: "body" | "query" | "path"): T {
  const result = schema.safeParse(value);
  if (!result.success) throw zodError(result.error, where);
  return result.data;
}

/**
 * Why `value` is not an acceptable EVM address, or undefined when it is: a 0x-prefixed 20-byte
 * hex string, all lower-case, all upper-case, or mixed case with a valid EIP-55 checksum (a
 * mistyped mixed-case address is refused rather than sent real funds).
 */
export function addressProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) return "must be a 0x-prefixed 20-byte EVM address";
  const hex = value.slice(2);
  if (hex !== hex.toUpperCase() && !isAddress(value, { strict: true })) return "has a wrong EIP-55 checksum (mixed case must be the checksummed form; or send it all lower-case)";
  return undefined;
}

/** A validated, lower-case EVM address, or a 400 naming `param` (see {@link addressProblem}). */
export function parseAddress(value: unknown, param: string): string {
  const problem = addressProblem(value);
  if (problem) throw invalidRequest(`${param} ${problem}`, param);
  return (value as string).toLowerCase();
}
