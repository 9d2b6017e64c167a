import { defineConfig } from "vitest/config";

// Only the unit tests under lib/: the browser test (e2e/) runs with `npm run test:e2e` against
// a built app, and .next/ holds build output. The workspace packages resolve to their sources,
// as in every package's tests, so a fresh clone needs no build first.
export default defineConfig({
  resolve: { conditions: ["tollgate-source"] },
  ssr: { resolve: { conditions: ["tollgate-source"] } },
  test: { name: "example-next-app", include: ["lib/**/*.test.ts"] },
});
