import { defineConfig } from "vitest/config";

// Checks of the repository as a whole (its docs, its packaging), not of one package.
export default defineConfig({
  test: { name: "repo", include: ["*.test.ts"] },
});
