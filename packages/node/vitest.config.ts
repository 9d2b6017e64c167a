import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["tollgate-source"] },
  ssr: { resolve: { conditions: ["tollgate-source"] } },
  // Process-level tests (CLI processes, servers, anvil) run several times slower on a loaded 2-core CI machine.
  test: { name: "node", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
});
