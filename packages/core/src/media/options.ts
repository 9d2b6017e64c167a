/** Options of the media capability (`createGateway({ media: … })`): upstream providers and routing. */
import { z } from "zod";

const providerName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be a lower-case slug");

/** One configured upstream provider. */
export const providerConfigSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("openai-compatible"),
    /** Base URL of the API, e.g. "https://api.openai.com/v1". */
    baseUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    apiKey: z.string().min(1).optional(),
    /** @default 60000 */
    timeoutMs: z.number().int().min(100).max(600_000).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /**
     * The request field a chat call's output cap is sent in, for servers that read only one:
     * `max_tokens` (a server that ignores the newer name would run past a cap it never read, while
     * the gateway bills at most what it reserved) or `max_completion_tokens` (OpenAI's reasoning
     * models refuse `max_tokens`). @default the field the client used, else `max_completion_tokens`
     */
    outputCapField: z.enum(["max_tokens", "max_completion_tokens"]).optional(),
  }),
  z.strictObject({
    type: z.literal("local"),
    /** How long a simulated video job takes. @default 3000 */
    videoDurationMs: z.number().int().min(0).max(3_600_000).optional(),
    /** Pause between the words of a streamed chat answer. @default 0 */
    chatChunkDelayMs: z.number().int().min(0).max(60_000).optional(),
  }),
]);
export type ProviderConfig = z.output<typeof providerConfigSchema>;

/** The zod schema of `options.media`. */
export const mediaOptionsSchema = z
  .strictObject({
    /** Upstream providers by name. A card whose `provider` equals a name is served by it. `local` always exists. */
    providers: z.record(providerName, providerConfigSchema).optional(),
    /** Card provider slug → configured provider name, for cards whose provider has no entry of its own. */
    routing: z.record(providerName, providerName).optional(),
    /** The provider serving every other card. @default "local" */
    defaultProvider: providerName.optional(),
  })
  .optional();
export type MediaOptions = z.output<typeof mediaOptionsSchema>;
