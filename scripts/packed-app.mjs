#!/usr/bin/env node
// The packages as npm would ship them, used by an app outside the monorepo: `npm pack` every
// publishable package, install the tarballs into a scratch app under the OS temp directory, type-
// check that app with a plain `tsc` (strict, skipLibCheck: false; NodeNext ESM, NodeNext CommonJS
// and Bundler resolution), then run it: createGateway on createSqliteStore, serve() from
// @tollgate/node, and calls through @tollgate/client, including a refused one. Exits 1 on any miss.
//
// Run after `npm run build` (CI does); a package whose dist is missing is built first. The install
// is offline-first (--prefer-offline: every dependency is already in npm's cache after the
// monorepo's own install) and skips install scripts; better-sqlite3's native addon is then copied
// from the monorepo's own build of the same version (rebuilt from source only if the versions
// differ), so the run does not compile SQLite again.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Every package a user installs from npm; @tollgate/testing (a dev tool on vitest and anvil) is left out. */
const PACKAGES = ["core", "sqlite", "postgres", "node", "express", "fastify", "next", "client"];
const started = Date.now();
const step = (what) => console.log(`packed-app: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs a command; on failure throws with its output, so the CI log says what went wrong. */
function run(cmd, args, cwd, env = {}) {
  try {
    return execFileSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`${[cmd, ...args].join(" ")} failed in ${cwd} (exit ${error.status}):\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), "tollgate-packed-"));
let failed = false;
try {
  // 1. Build what is missing, then pack.
  const unbuilt = PACKAGES.filter((p) => !existsSync(join(root, "packages", p, "dist", "index.d.ts")));
  if (unbuilt.length > 0) {
    run(npm, ["run", "build", ...unbuilt.flatMap((p) => ["-w", `packages/${p}`])], root);
    step(`built ${unbuilt.join(", ")}`);
  }
  const tarballs = join(dir, "tarballs");
  mkdirSync(tarballs);
  const packed = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", tarballs, ...PACKAGES.flatMap((p) => ["-w", `packages/${p}`])], root));
  const files = new Map(packed.map((p) => [p.name, join(tarballs, p.filename)]));
  for (const p of packed) if (!p.files.some((f) => f.path === "README.md")) throw new Error(`${p.name}: the tarball has no README.md`);
  step(`packed ${packed.map((p) => `${p.name} (${(p.size / 1024).toFixed(0)} KiB)`).join(", ")}`);

  // 2. A scratch app depending on the tarballs, as an app would (its own @types/node and @types/express).
  const app = join(dir, "app");
  mkdirSync(app);
  const rootPkg = readJson(join(root, "package.json"));
  const expressPkg = readJson(join(root, "packages", "express", "package.json"));
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify(
      {
        name: "tollgate-packed-app",
        private: true,
        type: "module",
        dependencies: Object.fromEntries([...files].map(([name, file]) => [name, `file:${file}`])),
        devDependencies: { "@types/node": rootPkg.devDependencies["@types/node"], "@types/express": expressPkg.devDependencies["@types/express"] },
        allowScripts: { "better-sqlite3": true },
      },
      null,
      2,
    ),
  );
  run(npm, ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", "--loglevel=error"], app);
  provideSqliteAddon(app);
  step("installed the tarballs into a scratch app");

  // 3. Typecheck it with a plain tsc, once per module setting.
  writeFileSync(join(app, "app.ts"), appSource());
  writeFileSync(join(app, "adapters.ts"), adaptersSource());
  writeFileSync(join(app, "require.cts"), requireSource());
  const strict = { strict: true, skipLibCheck: false, target: "ES2022", lib: ["ES2023"], types: ["node"], noEmit: true };
  const configs = {
    nodenext: { compilerOptions: { ...strict, module: "NodeNext", moduleResolution: "NodeNext" }, files: ["app.ts", "adapters.ts", "require.cts"] },
    bundler: { compilerOptions: { ...strict, module: "ESNext", moduleResolution: "Bundler" }, files: ["app.ts", "adapters.ts"] },
    emit: { compilerOptions: { ...strict, module: "NodeNext", moduleResolution: "NodeNext", noEmit: false, outDir: "out" }, files: ["app.ts"] },
  };
  const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
  for (const [name, config] of Object.entries(configs)) {
    writeFileSync(join(app, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
    run(process.execPath, [tsc, "-p", `tsconfig.${name}.json`], app);
  }
  step(`typechecked (${Object.keys(configs).join(", ")}; strict, skipLibCheck false)`);

  // 4. Run it.
  const out = run(process.execPath, [join(app, "out", "app.js")], app, { TOLLGATE_PACKED_DB: join(dir, "app.db") });
  const result = JSON.parse(out.trim().split("\n").at(-1));
  const expected = { models: 1, dimensions: 1536, charged: "2", remaining: "999998", notFound: "model_not_found", unauthenticated: 401 };
  if (JSON.stringify(result) !== JSON.stringify(expected)) throw new Error(`the app printed ${JSON.stringify(result)}, expected ${JSON.stringify(expected)}`);
  step(`ran the app: ${JSON.stringify(result)}`);
} catch (error) {
  failed = true;
  console.error(`packed-app: ${error.message}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? "packed-app: FAILED" : `packed-app: passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);

/** Puts better-sqlite3's addon in place after an install without scripts. */
function provideSqliteAddon(app) {
  const ours = dirname(createRequire(join(root, "packages", "sqlite", "package.json")).resolve("better-sqlite3/package.json"));
  const theirs = join(app, "node_modules", "better-sqlite3");
  const addon = join("build", "Release", "better_sqlite3.node");
  if (readJson(join(ours, "package.json")).version === readJson(join(theirs, "package.json")).version && existsSync(join(ours, addon))) {
    mkdirSync(dirname(join(theirs, addon)), { recursive: true });
    copyFileSync(join(ours, addon), join(theirs, addon));
  } else {
    run(npm, ["rebuild", "better-sqlite3", "--build-from-source"], app);
  }
  if (!readdirSync(join(theirs, "build", "Release")).includes("better_sqlite3.node")) throw new Error("better-sqlite3 has no native addon");
}

// The app that runs: SQLite store, the standalone server, and the typed client.
function appSource() {
  return `import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createGateway, type GatewayOptions } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve, type RunningServer } from "@tollgate/node";
import { AuthenticationError, createTollgateClient, NotFoundError, type TollgateClient } from "@tollgate/client";

const filename = process.env.TOLLGATE_PACKED_DB ?? "./data/app.db";
mkdirSync(dirname(filename), { recursive: true });
const internalSecret = "packed-app-internal-secret-0123";
const options: GatewayOptions = { store: createSqliteStore({ filename }), internalSecret, sweepIntervalMs: 0 };
const running: RunningServer = await serve(createGateway(options), { port: 0 });

const owner: TollgateClient = createTollgateClient({ baseUrl: running.url, internalSecret, sessionAddress: "0x00000000000000000000000000000000000000a1", networkId: 8453 });
const key = await owner.keys.create({ budgetLimit: 1_000_000n, expiresAt: Date.now() + 3_600_000, purpose: "api" });
const client = createTollgateClient({ baseUrl: running.url, apiKey: key.token, networkId: 8453 });

const models = await client.models.list({ limit: 1 });
const { data, meta } = await client.embeddings.create({ model: "text-embedding-3-small", input: "hello" }).withResponse();
const remaining: bigint | undefined = meta.budget?.remaining;
const refusal = async (call: () => Promise<unknown>): Promise<unknown> => call().then(() => "no error", (error: unknown) => error);
const notFound = await refusal(() => client.embeddings.create({ model: "no-such-model", input: "x" }));
const unauthenticated = await refusal(() => createTollgateClient({ baseUrl: running.url, apiKey: "svc-not-a-key", maxRetries: 0 }).keys.get(key.keyId));
await running.close();

console.log(
  JSON.stringify({
    models: models.data.length,
    dimensions: data.data[0]?.embedding.length,
    charged: meta.receipt?.finalAmountWei,
    remaining: remaining?.toString(),
    notFound: notFound instanceof NotFoundError ? notFound.code : String(notFound),
    unauthenticated: unauthenticated instanceof AuthenticationError ? unauthenticated.status : String(unauthenticated),
  }),
);
`;
}

// Types only: every adapter and the PostgreSQL store, and proof that the types are real (not any).
function adaptersSource() {
  return `import { createGateway } from "@tollgate/core";
import { createHandler as expressHandler } from "@tollgate/express";
import { createHandler as fastifyHandler } from "@tollgate/fastify";
import { createHandler as nextHandler } from "@tollgate/next";
import { createNodeHandler } from "@tollgate/node";
import { createPostgresStore } from "@tollgate/postgres";
import express from "express";
import Fastify from "fastify";

const gateway = createGateway();
express().use("/gateway", expressHandler(gateway, { maxBodySize: 1024 * 1024 }));
await Fastify().register(fastifyHandler(gateway), { prefix: "/gateway" });
export const { GET, POST, DELETE, OPTIONS } = nextHandler(gateway, { basePath: "/gateway" });
export const nodeHandler = createNodeHandler(gateway, { basePath: "/gateway", onError: (error: unknown) => console.error(error) });
export const openStore = (connectionString: string) => createPostgresStore({ connectionString, schema: "tollgate" });

// @ts-expect-error an option createGateway does not have
createGateway({ noSuchOption: true });
// @ts-expect-error feeBps is a number of basis points
createGateway({ feeBps: "100" });
// @ts-expect-error basePath is a string
nextHandler(gateway, { basePath: 1 });
`;
}

// The CommonJS entry points (the "require" condition: index.d.cts) from a .cts file.
function requireSource() {
  return `import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve } from "@tollgate/node";
import { createTollgateClient } from "@tollgate/client";

export const start = () => serve(createGateway({ store: createSqliteStore({ filename: ":memory:" }) }), { port: 0 });
export const client = createTollgateClient({ baseUrl: "http://127.0.0.1:8787" });
`;
}
