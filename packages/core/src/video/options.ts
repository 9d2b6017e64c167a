/** Options of the video capability (`createGateway({ video: … })`). */
import { z } from "zod";

/** The zod schema of `options.video`. */
export const videoOptionsSchema = z.strictObject({}).optional();
export type VideoOptions = z.output<typeof videoOptionsSchema>;
