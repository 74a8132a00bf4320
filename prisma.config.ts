// Prisma CLI configuration. Only `prisma generate` (which needs no database) and,
// where the schema engine can be downloaded, `prisma migrate deploy` use it;
// offline, migrations are applied by `npm run db:migrate` (lib/platform/migrate.ts).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unused" },
});
