import { defineConfig } from "tsup";
import { libraryBuild } from "../../tsup.shared.js";

export default defineConfig(libraryBuild({ external: ["better-sqlite3", "@tollgate/core"] }));
