// Applies prisma/migrations offline, recording each in _prisma_migrations exactly
// as `prisma migrate deploy` does, so either tool can take over from the other.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";

export const MIGRATIONS_DIR = path.join(process.cwd(), "prisma", "migrations");

// Prisma Migrate's own lock key and table definition.
const PRISMA_MIGRATE_LOCK = 72707369;
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export type Migration = { name: string; sql: string; checksum: string };

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

export type MigrateResult = { applied: string[]; alreadyApplied: number };

/** Applies every migration not yet recorded; refuses to run over a failed or edited one. */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const migrations = readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SET client_min_messages = warning");
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      rolled_back_at: Date | null;
    }>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`);
    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed)
      throw new Error(
        `Migration ${failed.migration_name} failed earlier and was never resolved; fix the database, then mark it rolled back.`,
      );
    const done = new Map(rows.filter((r) => r.finished_at).map((r) => [r.migration_name, r.checksum]));
    const applied: string[] = [];
    for (const m of migrations) {
      const recorded = done.get(m.name);
      if (recorded) {
        if (recorded !== m.checksum)
          throw new Error(
            `Migration ${m.name} was edited after it was applied (checksum differs); add a new migration instead.`,
          );
        continue;
      }
      const id = randomUUID();
      await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)`, [
        id,
        m.checksum,
        m.name,
      ]);
      try {
        await client.query("BEGIN");
        await client.query(m.sql);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        await client.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, String(error)]);
        throw new Error(`Migration ${m.name} failed: ${(error as Error).message}`);
      }
      await client.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [
        id,
      ]);
      applied.push(m.name);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}
