/** Options of the dispenser capability (`createGateway({ dispenser: … })`). */
import { z } from "zod";
import { privateKeySchema } from "../chain/options.js";

/** One chain's dispenser wallet. */
export const dispenserChainSchema = z.strictObject({
  /** Must be one of `options.chains` (where its RPC URL and USDC address come from). */
  chainId: z.number().int().positive(),
  /** The wallet that sends the test USDC (it needs USDC and gas). */
  privateKey: privateKeySchema,
  /** Most claims this chain ever serves (pending and done); unset = unlimited. Past it a claim is 503. */
  maxClaims: z.number().int().positive().optional(),
  /** Refuse claims on this chain (503) while still reporting its status. @default false */
  paused: z.boolean().optional(),
});

/** The zod schema of `options.dispenser`. Cross-checks against `options.chains` run in the service. */
export const dispenserOptionsSchema = z
  .strictObject({
    /** USDC atomic units sent per claim. @default 1000000 (1.00 USDC) */
    claimAmount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    chains: z.array(dispenserChainSchema).min(1),
  })
  .optional();
export type DispenserOptions = z.output<typeof dispenserOptionsSchema>;

/** The claim amount when none is configured: 1.00 USDC. */
export const DEFAULT_CLAIM_AMOUNT = 1_000_000;
