import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: { name: "sqlite", include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 20_000, hookTimeout: 60_000 },
});
