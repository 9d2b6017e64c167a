/** Options of the dispenser capability (`createGateway({ dispenser: … })`). */
import { z } from "zod";

/** The zod schema of `options.dispenser`. */
export const dispenserOptionsSchema = z.strictObject({}).optional();
export type DispenserOptions = z.output<typeof dispenserOptionsSchema>;
