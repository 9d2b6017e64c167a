/** Options of the feedback capability (`createGateway({ feedback: … })`). */
import { z } from "zod";

/** The zod schema of `options.feedback`. */
export const feedbackOptionsSchema = z.strictObject({}).optional();
export type FeedbackOptions = z.output<typeof feedbackOptionsSchema>;
