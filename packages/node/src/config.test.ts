import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NATIVE_CATALOG } from "@tollgate/core";
import { formatHelp, parseOptions, redactUrl, serveOptions } from "./config.js";

const parse = (argv: string[], env: Record<string, string> = {}) => parseOptions(serveOptions, argv, env);
const problems = (argv: string[], env: Record<string, string> = {}) => {
  const r = parse(argv, env);
  return r.kind === "error" ? r.problems : [];
};

const dir = mkdtempSync(join(tmpdir(), "tollgate-config-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe("serve configuration", () => {
  it("has defaults for port, host, db and the dev chain (auto) and nothing else", () => {
    expect(parse([])).toEqual({ kind: "ok", config: { port: 8787, host: "127.0.0.1", db: "./data/tollgate.db", devChain: "auto", logLevel: "info" } });
  });

  it("reads every option from the environment, ignoring empty variables", () => {
    const r = parse([], {
      TOLLGATE_PORT: "9000",
      TOLLGATE_HOST: "0.0.0.0",
      TOLLGATE_DB: "/tmp/x.db",
      TOLLGATE_MODELS_SERVICE_URL: "http://127.0.0.1:9100/models",
      TOLLGATE_CORS_ORIGINS: "https://a.example.com, http://localhost:3000",
      TOLLGATE_CATALOG: "",
      TOLLGATE_DEV_CHAIN: "OFF",
    });
    expect(r).toEqual({
      kind: "ok",
      config: {
        port: 9000,
        host: "0.0.0.0",
        db: "/tmp/x.db",
        devChain: "off",
        logLevel: "info",
        modelsServiceUrl: "http://127.0.0.1:9100/models",
        corsOrigins: ["https://a.example.com", "http://localhost:3000"],
      },
    });
  });

  it("lets flags win over the environment (both --flag value and --flag=value)", () => {
    const r = parse(["--port", "9001", "--host=::1", "--cors-origins", "*"], { TOLLGATE_PORT: "9000", TOLLGATE_HOST: "0.0.0.0", TOLLGATE_CORS_ORIGINS: "https://a.example.com" });
    expect(r).toMatchObject({ kind: "ok", config: { port: 9001, host: "::1", corsOrigins: "*" } });
  });

  it("takes the sign-in domains and the trusted proxy count, and refuses bad ones", () => {
    expect(parse(["--auth-domains", "gw.example.com, localhost:8787", "--trusted-proxies", "1"])).toMatchObject({ kind: "ok", config: { authDomains: ["gw.example.com", "localhost:8787"], trustedProxies: 1 } });
    expect(parse([], { TOLLGATE_TRUSTED_PROXIES: "0" })).toMatchObject({ kind: "ok", config: { trustedProxies: 0 } });
    expect(parse(["--trusted-proxies", "11"])).toMatchObject({ kind: "error" });
    expect(parse(["--auth-domains", "https://gw.example.com/path"])).toMatchObject({ kind: "error" });
  });

  it("takes a postgres:// or postgresql:// URL as --db, with a schema and a pool size", () => {
    const url = "postgres://tollgate:s3cret@db.internal:5432/tollgate?sslmode=require";
    expect(parse(["--db", url, "--db-schema", "gw_eu", "--db-pool-size", "25", "--db-migrate", "off"])).toMatchObject({ kind: "ok", config: { db: url, dbSchema: "gw_eu", dbPoolSize: 25, dbMigrate: false } });
    expect(parse(["--db-migrate", "ON"])).toMatchObject({ kind: "ok", config: { dbMigrate: true } });
    expect(parse(["--db", url, "--db-group-commit", "off"])).toMatchObject({ kind: "ok", config: { dbGroupCommit: false } });
    expect(parse(["--db", url, "--db-prepared-statements", "off"])).toMatchObject({ kind: "ok", config: { dbPreparedStatements: false } });
    expect(parse([], { TOLLGATE_DB: "postgresql://db.internal/t", TOLLGATE_DB_SCHEMA: "tollgate", TOLLGATE_DB_POOL_SIZE: "4" })).toMatchObject({
      kind: "ok",
      config: { db: "postgresql://db.internal/t", dbSchema: "tollgate", dbPoolSize: 4 },
    });
    // A Unix socket directory instead of a host.
    expect(parse(["--db", "postgres:///tollgate?host=/run/postgresql"])).toMatchObject({ kind: "ok", config: { db: "postgres:///tollgate?host=/run/postgresql" } });
  });

  it("rejects a postgres URL without a host (never echoing its password), a bad schema name and a bad pool size", () => {
    expect(problems(["--db", "postgres://u:hunter2@/db"])).toEqual(['tollgate: --db must be a URL such as postgres://user:password@host:5432/database (got "postgres://u:***@/db")']);
    expect(problems(["--db", "postgres://"])).toHaveLength(1);
    expect(problems(["--db-schema", "Tollgate-EU", "--db-pool-size", "0"])).toEqual([
      'tollgate: --db-schema must be a lower-case SQL identifier (letters, digits and _, at most 63, not starting with a digit) (got "Tollgate-EU")',
      'tollgate: --db-pool-size must be an integer between 1 and 1000 (got "0")',
    ]);
    expect(problems(["--db-schema", "1st"])).toHaveLength(1);
    expect(problems(["--db-schema", "a".repeat(64)])).toHaveLength(1);
    expect(problems([], { TOLLGATE_DB_POOL_SIZE: "1001" })).toHaveLength(1);
    expect(problems(["--db-pool-size", "2.5"])).toHaveLength(1);
    expect(problems([], { TOLLGATE_DB_MIGRATE: "later" })).toEqual(['tollgate: TOLLGATE_DB_MIGRATE must be on or off (got "later")']);
  });

  it("takes the internal secret and the wallet-auth mode from flags or the environment; no default for either", () => {
    const secret = "host-app-secret-0123456789";
    expect(parse(["--internal-secret", secret, "--wallet-auth", "trusted-header"])).toMatchObject({ kind: "ok", config: { internalSecret: secret, walletAuth: "trusted-header" } });
    expect(parse([], { TOLLGATE_INTERNAL_SECRET: secret, TOLLGATE_WALLET_AUTH: " Verified " })).toMatchObject({ kind: "ok", config: { internalSecret: secret, walletAuth: "verified" } });
    const none = parse([]);
    expect(none.kind === "ok" && ["internalSecret" in none.config, "walletAuth" in none.config]).toEqual([false, false]);
  });

  it("rejects a short internal secret without echoing it, and an unknown wallet-auth mode", () => {
    expect(problems(["--internal-secret", "hunter2"])).toEqual(["tollgate: --internal-secret must be at least 16 characters (got 7)"]);
    expect(problems([], { TOLLGATE_INTERNAL_SECRET: "hunter2" })).toEqual(["tollgate: TOLLGATE_INTERNAL_SECRET must be at least 16 characters (got 7)"]);
    expect(problems(["--wallet-auth", "header"])).toEqual(['tollgate: --wallet-auth must be verified or trusted-header (got "header")']);
  });

  it("redactUrl hides the password, wherever the URL carries it, and only that", () => {
    expect(redactUrl("postgres://u:p%40ss@h:5432/d?sslmode=require")).toBe("postgres://u:***@h:5432/d?sslmode=require");
    expect(redactUrl("postgres://u@h/d")).toBe("postgres://u@h/d");
    expect(redactUrl("postgres://u:pw@/d")).toBe("postgres://u:***@/d");
    expect(redactUrl("./data/tollgate.db")).toBe("./data/tollgate.db");
    // pg also takes the password (and a client key's passphrase) in the query string.
    expect(redactUrl("postgres://u@h:5432/d?password=hunter2&sslmode=require")).toBe("postgres://u@h:5432/d?password=***&sslmode=require");
    expect(redactUrl("postgres://u:pw@h/d?sslpassword=x&sslkey=/k")).toBe("postgres://u:***@h/d?sslpassword=***&sslkey=***");
    expect(redactUrl("postgres://u@h/d?PASSWORD=x")).toBe("postgres://u@h/d?PASSWORD=***");
    // A URL that does not parse (a port out of range) is masked by pattern.
    expect(redactUrl("postgres://u:pw@h:99999/d?password=x&sslmode=require")).toBe("postgres://u:***@h:99999/d?password=***&sslmode=require");
  });

  it("loads and validates catalog files (array or { cards })", () => {
    const cards = NATIVE_CATALOG.slice(0, 2);
    const r = parse(["--catalog", file("a.json", JSON.stringify(cards)), "--extended-catalog", file("b.json", JSON.stringify({ cards }))]);
    expect(r.kind).toBe("ok");
    if (r.kind === "ok") {
      expect(r.config.catalog).toHaveLength(2);
      expect(r.config.extendedCatalog?.[0]?.modelId).toBe(cards[0]!.modelId);
    }
  });

  it("reports every bad value at once, one line each, naming where it came from", () => {
    expect(problems(["--port", "abc", "--host", "a b", "--models-service-url", "ftp://x", "--cors-origins", "https://a.example.com/path"], { TOLLGATE_DB: " " })).toEqual([
      'tollgate: --port must be an integer between 1 and 65535 (0 picks a free port) (got "abc")',
      'tollgate: --host must be a host name or IP address (got "a b")',
      'tollgate: TOLLGATE_DB must be a SQLite file path or a postgres:// URL (got " ")',
      'tollgate: --models-service-url must be an http(s) URL such as http://127.0.0.1:9000 (got "ftp://x")',
      'tollgate: --cors-origins must be * or a comma-separated list of origins such as https://app.example.com (got "https://a.example.com/path")',
    ]);
    expect(problems(["--port", "65536"])).toHaveLength(1);
    expect(problems(["--port", "80.5"])).toHaveLength(1);
    expect(problems([], { TOLLGATE_PORT: "-1" })).toEqual(['tollgate: TOLLGATE_PORT must be an integer between 1 and 65535 (0 picks a free port) (got "-1")']);
  });

  it("reports unreadable, non-JSON and invalid catalog files", () => {
    const missing = join(dir, "missing.json");
    expect(problems(["--catalog", missing])).toEqual([`tollgate: --catalog cannot be read: ENOENT (got ${JSON.stringify(missing)})`]);
    const bad = file("bad.json", "{nope");
    expect(problems(["--catalog", bad])[0]).toMatch(/^tollgate: --catalog is not valid JSON: .* \(got ".*bad\.json"\)$/);
    const card = { ...NATIVE_CATALOG[0]!, provider: "Not A Slug", pricing: [] };
    const invalid = problems(["--extended-catalog", file("invalid.json", JSON.stringify({ cards: [card] }))]);
    expect(invalid.length).toBeGreaterThanOrEqual(2);
    for (const line of invalid) expect(line).toMatch(/^tollgate: --extended-catalog ".*invalid\.json": cards\.0\.(provider|pricing): /);
    expect(problems(["--catalog", file("obj.json", '{"x":1}')])).toHaveLength(1);
  });

  it("rejects an unknown flag, a missing value and a stray argument with one line", () => {
    expect(problems(["--nope"])).toEqual(["tollgate: unknown option --nope (see --help)"]);
    expect(problems(["--port"])).toEqual(["tollgate: --port needs a value (see --help)"]);
    expect(problems(["stray"])).toEqual(['tollgate: unexpected argument "stray" (see --help)']);
  });

  it("answers --help and -h, and the help lists every option, env variable and default", () => {
    expect(parse(["--help"])).toEqual({ kind: "help" });
    expect(parse(["--port", "abc", "-h"])).toEqual({ kind: "help" });
    const help = formatHelp("tollgate serve [options]", "Start.", serveOptions);
    for (const o of Object.values(serveOptions)) {
      expect(help).toContain(`--${o.flag} ${o.value}`);
      expect(help).toContain(o.env);
      if ("default" in o) expect(help).toContain(`default ${o.default}`);
    }
    expect(help).toContain("-h, --help");
  });
});
