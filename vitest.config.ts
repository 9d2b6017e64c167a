import { defineConfig } from "vitest/config";

// One run over every package. The "source" export condition makes workspace packages
// resolve to their TypeScript sources, so tests never depend on a prior build.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    projects: ["packages/*", "examples/*"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
