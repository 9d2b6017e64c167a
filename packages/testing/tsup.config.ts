import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// vitest is a peer dependency (external by default).
export default defineConfig(libraryBuild());
