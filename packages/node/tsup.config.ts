import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// The library ships ESM + CJS with declarations; the CLI is ESM only (tsup keeps its shebang and
// marks the file executable). `shims` gives the CJS build import.meta.url (startAnvil resolves the
// anvil binary from it).
export default defineConfig([
  libraryBuild({ platform: "node", shims: true }),
  libraryBuild({ entry: { cli: "src/cli.ts" }, format: ["esm"], dts: false, clean: false, platform: "node" }),
]);
