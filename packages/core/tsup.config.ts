import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

export default defineConfig(libraryBuild({ entry: { index: "src/index.ts", internals: "src/internals.ts" } }));
