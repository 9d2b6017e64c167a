import { describe, expect, it } from "vitest";
import type { ModelCard } from "../catalog/card.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { systemClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { createFetchHttpClient } from "../http/client.js";
import { GatewayOptionsError } from "../options.js";
import { createUpstreams } from "./upstreams.js";

const deps = { http: createFetchHttpClient(), clock: systemClock };
const card = (provider: string): ModelCard => ({ ...NATIVE_CATALOG[0]!, provider });
const upstream = (port: number) => ({ type: "openai-compatible" as const, baseUrl: `http://127.0.0.1:${port}/v1` });

describe("routing a card to an upstream", () => {
  it("takes the provider named like the card's provider slug, else routing[slug], else defaultProvider", () => {
    const u = createUpstreams(
      { providers: { openai: upstream(1), together: upstream(2) }, routing: { "black-forest-labs": "together" }, defaultProvider: "openai" },
      deps,
    );
    expect(["openai", "together", "black-forest-labs", "anthropic", "local"].map((p) => u.nameFor(card(p)))).toEqual([
      "openai",
      "together",
      "together",
      "openai",
      "local",
    ]);
    expect(u.registry.names()).toEqual(["local", "openai", "together"]);
  });

  it("serves every card without a provider of its own from local when nothing else is configured", () => {
    const u = createUpstreams(undefined, deps);
    expect([u.nameFor(card("openai")), u.registry.names()]).toEqual(["local", ["local"]]);
    expect(typeof u.inference(card("openai")).provider.embeddings).toBe("function");
  });

  it("refuses a routing entry or default that names an unconfigured provider, every one at once, as an options error", () => {
    const make = () => createUpstreams({ providers: { openai: upstream(1) }, routing: { groq: "grok", mistral: "openai" }, defaultProvider: "together" }, deps);
    expect(make).toThrow(GatewayOptionsError);
    expect(() => make()).toThrow(
      expect.objectContaining({
        issues: [
          'media.routing.groq: provider "grok" is not configured (configured: local, openai)',
          'media.defaultProvider: provider "together" is not configured (configured: local, openai)',
        ],
      }),
    );
    // The same through createGateway, which is what `tollgate serve` reports (exit 2).
    expect(() => createGateway({ media: { routing: { groq: "grok" } } })).toThrow(GatewayOptionsError);
  });
});
