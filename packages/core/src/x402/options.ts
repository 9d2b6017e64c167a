/** Options of the x402 capability (`createGateway({ x402: … })`). */
import { isAddress } from "viem";
import { z } from "zod";
import { privateKeySchema } from "../chain/options.js";

const address = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), "must be a 0x-prefixed 20-byte address")
  .transform((v) => v.toLowerCase() as `0x${string}`);

/** Who verifies and settles payments on a network. */
export const facilitatorOptionsSchema = z.discriminatedUnion("type", [
  /** In-process: verifies with viem and settles by submitting `transferWithAuthorization` from this wallet (which pays the gas). */
  z.strictObject({ type: z.literal("local"), privateKey: privateKeySchema }),
  /** A remote x402 facilitator (`POST /verify`, `POST /settle`, `GET /supported`). */
  z.strictObject({
    type: z.literal("http"),
    /** Base URL; `/verify`, `/settle` and `/supported` are appended. */
    url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    /** Extra request headers (e.g. an API key). */
    headers: z.record(z.string(), z.string()).optional(),
    /** Per-request deadline in ms (settlement waits for a receipt: allow for it). @default 15000 */
    timeoutMs: z.number().int().min(1).max(300_000).optional(),
  }),
]);
export type FacilitatorOptions = z.output<typeof facilitatorOptionsSchema>;

/** One network on which payments are accepted; `chainId` must be listed in `options.chains`. */
export const x402NetworkSchema = z.strictObject({
  chainId: z.number().int().positive(),
  facilitator: facilitatorOptionsSchema,
});

/** The zod schema of `options.x402`. Absent: x402 is off (media routes ask for a service key). */
export const x402OptionsSchema = z
  .strictObject({
    /** The address that receives payments (stored lower-case). */
    payTo: address,
    /** One entry per accepted chain (unique chain ids); one offer per entry in each 402. */
    networks: z
      .array(x402NetworkSchema)
      .min(1)
      .superRefine((list, ctx) => {
        const seen = new Set<number>();
        list.forEach((n, i) => {
          if (seen.has(n.chainId)) ctx.addIssue({ code: "custom", path: [i, "chainId"], message: `chain ${n.chainId} is listed twice` });
          seen.add(n.chainId);
        });
      }),
    /** How long a signed authorization may stay valid (the offers' `maxTimeoutSeconds`). @default 300 */
    maxTimeoutSeconds: z.number().int().min(10).max(86_400).optional(),
    /**
     * After a settle call that failed in transport (timeout, lost connection) or whose transaction
     * did not confirm, how long the gateway watches the chain for the transfer before it answers
     * that the payment failed (the funds may have moved: then the call is served). @default 30
     */
    settleCheckSeconds: z.number().int().min(0).max(600).optional(),
    /**
     * How often the chain is checked for the transfers of payments answered "failed" that may still
     * land (until their authorization is void): one that lands is recorded on its claim, counted in
     * `tollgate_x402_late_transfers_total` and logged for a refund. Every instance checks, also
     * after a restart; 0 turns the timer off. @default 15
     */
    lateTransferCheckSeconds: z.number().int().min(0).max(3600).optional(),
    /** Default resource description in challenges when the route gives none. */
    description: z.string().max(500).optional(),
  })
  .optional();
export type X402Options = z.output<typeof x402OptionsSchema>;
