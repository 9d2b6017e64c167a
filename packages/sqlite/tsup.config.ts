import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

// `shims`: the CJS build gets import.meta.url (the checkpoint worker resolves better-sqlite3 from it).
export default defineConfig(libraryBuild({ external: ["better-sqlite3", "@tollgate/core"], shims: true }));
