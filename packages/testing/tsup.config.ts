import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// vitest is a peer dependency (external by default); `shims` gives the CJS build import.meta.url
// (the anvil harness and the contract compiler locate files relative to the module).
export default defineConfig(libraryBuild({ shims: true }));
