import type { Options } from "tsup";

/**
 * The build every library package shares: ESM + CJS with declarations and source maps for
 * Node 20, `node:` imports kept. Dependencies and peer dependencies stay external (tsup's
 * default). A package passes only what differs (more entries, extra externals).
 */
export function libraryBuild(overrides: Options = {}): Options {
  return {
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    removeNodeProtocol: false,
    ...overrides,
  };
}
