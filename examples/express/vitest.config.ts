import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["tollgate-source"] },
  ssr: { resolve: { conditions: ["tollgate-source"] } },
  test: { name: "example-express", include: ["*.test.ts"], testTimeout: 30_000 },
});
