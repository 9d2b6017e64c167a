/** Options of the settlement capability (`createGateway({ settlement: … })`). */
import { z } from "zod";

/** The zod schema of `options.settlement`. */
export const settlementOptionsSchema = z.strictObject({}).optional();
export type SettlementOptions = z.output<typeof settlementOptionsSchema>;
