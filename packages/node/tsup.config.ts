import { defineConfig } from "tsup";

// The library ships ESM + CJS with declarations; the CLI is ESM only (tsup keeps its shebang and
// marks the file executable). Workspace packages and drivers stay external.
export default defineConfig([
  {
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    platform: "node",
    removeNodeProtocol: false,
  },
  {
    entry: { cli: "src/cli.ts" },
    format: ["esm"],
    dts: false,
    sourcemap: true,
    clean: false,
    target: "node20",
    platform: "node",
    removeNodeProtocol: false,
  },
]);
