import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["tollgate-source"] },
  ssr: { resolve: { conditions: ["tollgate-source"] } },
  test: { name: "testing", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 20_000, hookTimeout: 60_000 },
});
