import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: [
      "prisma/*.test.ts",
      "lib/**/*.test.ts",
      "dev/**/*.test.ts",
      "workers/**/*.test.ts",
      "app/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    globalSetup: ["dev/testing/global-setup.ts"],
    setupFiles: ["dev/testing/database-per-file.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Alert tests post to receivers on this machine (lib/platform/outbound.ts refuses loopback otherwise).
    env: { TALLY_SECRET_CACHE_TTL_MS: "0", NODE_ENV: "test", TALLY_ALERT_PRIVATE_NETWORKS: "127.0.0.0/8,::1/128" },
  },
});
