/** Options of the agents capability (`createGateway({ agents: … })`). */
import { z } from "zod";

/** The zod schema of `options.agents`. */
export const agentsOptionsSchema = z.strictObject({}).optional();
export type AgentsOptions = z.output<typeof agentsOptionsSchema>;
