/**
 * Anthropic Claude models (Messages API; ids are the API aliases of the latest snapshot).
 * Prices: https://www.anthropic.com/pricing#api and https://docs.claude.com/en/docs/about-claude/pricing
 * (list prices assumed current on 2026-11-21; cached input = cache-read price, 0.1× input).
 */
import { chatParams, int, textCard, type CardInput } from "./types.js";

const P = "anthropic";

const claude = (id: string, name: string, description: string, [input, cached, output]: [string, string, string], maxOut: number): CardInput =>
  textCard(P, {
    id, name, description, input, cached, output,
    context: 200000,
    vision: true,
    // An image costs about width × height / 750 tokens, and larger ones are scaled down to ~1.15
    // megapixels (docs.claude.com "Vision"): at most ~1,600; 1,600 plus a margin for rounding.
    imageTokens: 1_700,
    params: {
      ...chatParams({ maxTemperature: 1, maxTokens: maxOut, requireMaxTokens: true }),
      top_k: int("Only sample from the top K options for each token.", { minimum: 0 }),
      thinking_budget: int("Enables extended thinking with this many budget tokens (at least 1024, below max_tokens).", { minimum: 1024 }),
    },
  });

export const cards = [
  claude("claude-opus-4-5", "Claude Opus 4.5", "Anthropic's most intelligent model for complex agents, coding and long-horizon work.", ["5.00", "0.50", "25.00"], 64000),
  claude("claude-opus-4-1", "Claude Opus 4.1", "Previous Opus generation for demanding reasoning and agentic coding.", ["15.00", "1.50", "75.00"], 32000),
  claude("claude-sonnet-4-5", "Claude Sonnet 4.5", "Anthropic's balanced frontier model for coding and agents (1M-token context in beta).", ["3.00", "0.30", "15.00"], 64000),
  claude("claude-sonnet-4-0", "Claude Sonnet 4", "High-performance Claude 4 model with extended thinking.", ["3.00", "0.30", "15.00"], 64000),
  claude("claude-haiku-4-5", "Claude Haiku 4.5", "Anthropic's fastest, most cost-efficient current model with near-frontier coding ability.", ["1.00", "0.10", "5.00"], 64000),
] satisfies CardInput[];
