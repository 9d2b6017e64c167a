import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";

// The monorepo root: workspace packages are symlinked into its node_modules, so Turbopack and
// output tracing must both see it (Next warns and may mis-resolve when the two roots differ).
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

const config: NextConfig = {
  // Native addon: loaded with Node's require at runtime instead of bundled.
  serverExternalPackages: ["better-sqlite3"],
  outputFileTracingRoot: repoRoot,
  turbopack: { root: repoRoot },
  poweredByHeader: false,
};

export default config;
