// Prisma 6's CLI with the JS engine, so `migrate diff` needs no native engine.
import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join(import.meta.dirname, "..", "schema.prisma"),
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://localhost/unused" }),
});
