import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// The testing subpath needs vitest, fast-check and solc (optional peers), kept external.
export default defineConfig(libraryBuild({ entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts" }, external: ["vitest", "fast-check", "solc"], shims: true }));
