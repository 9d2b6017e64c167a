import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// The library ships ESM + CJS with declarations; the CLI is ESM only (tsup keeps its shebang and
// marks the file executable).
export default defineConfig([
  libraryBuild({ platform: "node" }),
  libraryBuild({ entry: { cli: "src/cli.ts" }, format: ["esm"], dts: false, clean: false, platform: "node" }),
]);
