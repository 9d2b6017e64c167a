import { defineConfig } from "vitest/config";

// Only the unit tests under lib/: the browser test (e2e/) runs with `npm run test:e2e` against
// a built app, and .next/ holds build output.
export default defineConfig({
  test: { name: "example-next-app", include: ["lib/**/*.test.ts"] },
});
