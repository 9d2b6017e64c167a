/** Options of the media capability (`createGateway({ media: … })`). */
import { z } from "zod";

/** The zod schema of `options.media`. */
export const mediaOptionsSchema = z.strictObject({}).optional();
export type MediaOptions = z.output<typeof mediaOptionsSchema>;
