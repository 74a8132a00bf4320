// Before a test file's modules load: a fresh database copied from the migrated
// template, named in DATABASE_URL so lib/db connects to it and nothing else.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { withDatabase } from "@/dev/testing/global-setup";

const adminUrl = inject("adminUrl");
const database = `t_${randomBytes(6).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database} TEMPLATE ${inject("templateDb")}`);
await admin.end();
process.env.DATABASE_URL = withDatabase(adminUrl, database);
process.env.TALLY_TEST_ADMIN_URL = adminUrl;
// Secrets at rest are sealed under this key (child processes inherit it); each file has its own database, so its own key.
process.env.TALLY_ENCRYPTION_KEY ??= randomBytes(32).toString("base64");

afterAll(async () => {
  const { closeDb } = await import("@/lib/platform/db");
  await closeDb();
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await c.end();
});
