/** Options of the x402 capability (`createGateway({ x402: … })`). */
import { z } from "zod";

/** The zod schema of `options.x402`. */
export const x402OptionsSchema = z.strictObject({}).optional();
export type X402Options = z.output<typeof x402OptionsSchema>;
