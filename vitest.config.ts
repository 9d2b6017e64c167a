import { defineConfig } from "vitest/config";

// One run over every package. The "tollgate-source" export condition makes workspace packages
// resolve to their TypeScript sources, so tests never depend on a prior build.
export default defineConfig({
  resolve: { conditions: ["tollgate-source"] },
  ssr: { resolve: { conditions: ["tollgate-source"] } },
  test: {
    projects: ["packages/*", "examples/*/vitest.config.ts", "scripts/vitest.config.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Two test files at once on a 2-core machine (vitest's default leaves one core idle): much of a
    // file's time is spent waiting on its child processes (anvil, PostgreSQL, gateway processes).
    maxWorkers: 2,
  },
});
