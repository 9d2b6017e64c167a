import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expandEnvReferences, redactSecrets, substitutionsOf } from "./config-env.js";
import { parseOptions, serveOptions } from "./config.js";

const env = { OPENAI_API_KEY: "sk-live-0123456789", RPC_KEY: "alchemy-key-42", EMPTY: "", SHORT: "ab" };

describe("${NAME} references in --config values", () => {
  it("replaces whole and embedded references in string values at any depth, and only there", () => {
    const input = {
      media: { providers: { openai: { type: "openai-compatible", baseUrl: "https://api.openai.com/v1", apiKey: "${OPENAI_API_KEY}", timeoutMs: 5000 } } },
      chains: [{ chainId: 84532, rpcUrl: "https://base-sepolia.example/v2/${RPC_KEY}?x=${SHORT}", usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }],
      "${OPENAI_API_KEY}": true,
    };
    const r = expandEnvReferences(input, env);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toEqual({
      media: { providers: { openai: { type: "openai-compatible", baseUrl: "https://api.openai.com/v1", apiKey: "sk-live-0123456789", timeoutMs: 5000 } } },
      chains: [{ chainId: 84532, rpcUrl: "https://base-sepolia.example/v2/alchemy-key-42?x=ab", usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }],
      "${OPENAI_API_KEY}": true, // keys are never expanded
    });
    expect(r.references).toEqual([
      { name: "OPENAI_API_KEY", path: "media.providers.openai.apiKey" },
      { name: "RPC_KEY", path: "chains.0.rpcUrl" },
      { name: "SHORT", path: "chains.0.rpcUrl" },
    ]);
    expect(input.media.providers.openai.apiKey).toBe("${OPENAI_API_KEY}"); // the input is not mutated
  });

  it("reads $${ as a literal ${ and leaves a lone $ alone", () => {
    const r = expandEnvReferences({ a: "$${OPENAI_API_KEY}", b: "cost: $5, $$ and ${RPC_KEY}$" }, env);
    expect(r).toMatchObject({ ok: true, value: { a: "${OPENAI_API_KEY}", b: "cost: $5, $$ and alchemy-key-42$" } });
  });

  it("reports every unset, empty and malformed reference at once, naming the variable and the path, never a value", () => {
    const r = expandEnvReferences(
      {
        x402: { networks: [{ facilitator: { privateKey: "${FACILITATOR_KEY}" } }] },
        a: "${EMPTY}",
        b: "${lower_ok} ${1BAD} ${OPENAI-API-KEY}",
        c: "${OPENAI_API_KEY",
        d: "${}",
      },
      env,
    );
    expect(r).toEqual({
      ok: false,
      problems: [
        "x402.networks.0.facilitator.privateKey: ${FACILITATOR_KEY} is not set in the environment",
        "a: ${EMPTY} is empty in the environment",
        "b: ${lower_ok} is not set in the environment",
        'b: "${" must start a reference such as ${OPENAI_API_KEY} (write $${ for a literal "${")',
        'b: "${" must start a reference such as ${OPENAI_API_KEY} (write $${ for a literal "${")',
        'c: "${" must start a reference such as ${OPENAI_API_KEY} (write $${ for a literal "${")',
        'd: "${" must start a reference such as ${OPENAI_API_KEY} (write $${ for a literal "${")',
      ],
    });
    expect(JSON.stringify(r)).not.toContain("sk-live");
  });

  it("keeps a __proto__ key of the JSON as a key", () => {
    const r = expandEnvReferences(JSON.parse('{"__proto__": {"polluted": "${RPC_KEY}"}}'), env);
    expect(r.ok && Object.getPrototypeOf(r.value) === Object.prototype && Object.keys(r.value as object)).toEqual(["__proto__"]);
    expect(r.ok && (r.value as Record<string, { polluted: string }>)["__proto__"]!.polluted).toBe("alchemy-key-42");
  });

  it("passes JSON without references through unchanged, with nothing recorded", () => {
    const input = { feeBps: 50, cors: { origins: ["https://app.example.com"] }, flag: false, none: null };
    expect(expandEnvReferences(input, {})).toEqual({ ok: true, value: input, references: [], masks: new Map() });
  });

  it("redactSecrets masks each substituted value (longest first) with its reference, but not values under 4 characters", () => {
    const r = expandEnvReferences({ k: "${OPENAI_API_KEY}", u: "https://rpc/${RPC_KEY}/${SHORT}", p: "${PREFIX}" }, { ...env, PREFIX: "sk-live" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const text = "upstream said: bad key sk-live-0123456789 at https://rpc/alchemy-key-42/ab (ab); sk-live";
    expect(redactSecrets(text, r)).toBe("upstream said: bad key ${OPENAI_API_KEY} at https://rpc/${RPC_KEY}/ab (ab); ${PREFIX}");
    expect(redactSecrets(text, undefined)).toBe(text);
  });
});

describe("--config reads references from the process environment", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-config-env-"));
  const file = (name: string, json: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(json));
    return path;
  };
  afterEach(() => void vi.unstubAllEnvs());

  it("substitutes at parse time and records what it substituted on the result", () => {
    vi.stubEnv("TOLLGATE_TEST_PAY_TO", "0x00000000000000000000000000000000000000b2");
    const r = parseOptions(serveOptions, ["--config", file("ok.json", { x402: { payTo: "${TOLLGATE_TEST_PAY_TO}" }, feeBps: 25 })], {});
    expect(r).toMatchObject({ kind: "ok", config: { config: { x402: { payTo: "0x00000000000000000000000000000000000000b2" }, feeBps: 25 } } });
    if (r.kind !== "ok") return;
    expect(substitutionsOf(r.config.config)?.references).toEqual([{ name: "TOLLGATE_TEST_PAY_TO", path: "x402.payTo" }]);
    expect(substitutionsOf({})).toBeUndefined();
  });

  it("makes a missing variable a problem line beside the other option problems, naming the file, the path and the variable", () => {
    vi.stubEnv("TOLLGATE_TEST_MISSING", undefined);
    const path = file("missing.json", {
      media: { providers: { openai: { type: "openai-compatible", baseUrl: "https://api.openai.com/v1", apiKey: "${TOLLGATE_TEST_MISSING}" } } },
    });
    expect(parseOptions(serveOptions, ["--port", "x"], { TOLLGATE_CONFIG: path })).toEqual({
      kind: "error",
      problems: [
        'tollgate: --port must be an integer between 1 and 65535 (0 picks a free port) (got "x")',
        `tollgate: TOLLGATE_CONFIG ${JSON.stringify(path)}: media.providers.openai.apiKey: \${TOLLGATE_TEST_MISSING} is not set in the environment`,
      ],
    });
  });
});
