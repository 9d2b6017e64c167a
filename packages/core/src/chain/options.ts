/** The `chains` option: the EVM chains the gateway talks to, shared by x402, dispenser and settlement. */
import { isAddress } from "viem";
import { z } from "zod";

const address = z.string().refine((v) => isAddress(v, { strict: false }), "must be a 0x-prefixed 20-byte address");

/** One chain: where its RPC is and which USDC contract to use. */
export const chainConfigSchema = z.strictObject({
  chainId: z.number().int().positive(),
  /** Display name (e.g. "Base Sepolia"). @default `chain <id>` */
  name: z.string().min(1).max(100).optional(),
  rpcUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  usdc: address.transform((v) => v.toLowerCase() as `0x${string}`),
});
export type ChainConfig = z.output<typeof chainConfigSchema>;

/** The zod schema of `options.chains` (unique chain ids). */
export const chainsOptionsSchema = z
  .array(chainConfigSchema)
  .superRefine((list, ctx) => {
    const seen = new Set<number>();
    list.forEach((c, i) => {
      if (seen.has(c.chainId)) ctx.addIssue({ code: "custom", path: [i, "chainId"], message: `chain ${c.chainId} is listed twice` });
      seen.add(c.chainId);
    });
  })
  .optional();

/** A 32-byte hex private key (`0x` + 64 hex digits). */
export const privateKeySchema = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex private key").transform((v) => v as `0x${string}`);
