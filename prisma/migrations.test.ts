// The migrations and schema.prisma describe the same database: apply the
// migrations to one database, Prisma's own DDL for the schema to another, and
// compare what Prisma can express (tables, columns, types, defaults, keys,
// indexes, enums). CHECK constraints, triggers and partial indexes exist only in migrations.
import { execFileSync } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrate, readMigrations } from "@/lib/platform/migrate";

const adminUrl = process.env.TALLY_TEST_ADMIN_URL!;
const urlFor = (db: string) => Object.assign(new URL(adminUrl), { pathname: `/${db}` }).toString();

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function freshDatabase(name: string): Promise<string> {
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name}`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  return urlFor(name);
}

// Partitions (raw_events' months) exist only in migrations: Prisma sees the parent.
const NOT_A_PARTITION = (column: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_class p WHERE p.relnamespace = 'public'::regnamespace AND p.relname = ${column} AND p.relispartition)`;

async function catalog(url: string) {
  return withClient(url, async (c) => {
    const q = async (sql: string) => (await c.query(sql)).rows.map((r) => JSON.stringify(r)).sort();
    return {
      columns:
        await q(`SELECT table_name, column_name, data_type, udt_name, character_maximum_length, numeric_precision, datetime_precision, is_nullable, column_default
                        FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' AND ${NOT_A_PARTITION("table_name")}`),
      // Partial indexes (… WHERE …) are migration-only: Prisma's schema cannot express them.
      // A partitioned table's index reads "ON ONLY"; the same index on a plain table does not.
      indexes: await q(
        `SELECT tablename, indexname, replace(indexdef, ' ON ONLY ', ' ON ') AS indexdef FROM pg_indexes
          WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' AND indexdef NOT LIKE '% WHERE %' AND ${NOT_A_PARTITION("tablename")}`,
      ),
      // conparentid <> 0: the copies PostgreSQL keeps of a key for each partition.
      constraints:
        await q(`SELECT conrelid::regclass::text AS table, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint c
                            WHERE connamespace = 'public'::regnamespace AND contype IN ('p','f','u') AND conrelid::regclass::text <> '_prisma_migrations'
                              AND conparentid = 0 AND ${NOT_A_PARTITION("conrelid::regclass::text")}`),
      enums: await q(
        `SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
      ),
    };
  });
}

describe("schema.prisma and prisma/migrations", () => {
  it("produce the same tables, columns, keys, indexes and enums", async () => {
    const suffix = process.pid;
    const fromMigrations = await freshDatabase(`schema_m_${suffix}`);
    const fromSchema = await freshDatabase(`schema_s_${suffix}`);
    await migrate(fromMigrations);
    const ddl = execFileSync(process.execPath, [path.join("prisma", "schema-diff", "ddl.mjs")], {
      env: { ...process.env, DATABASE_URL: fromSchema },
      encoding: "utf8",
    });
    expect(ddl).toContain('CREATE TABLE "raw_events"');
    // The column default names functions the migrations define: bring them (and
    // the sequence they draw from) to the schema's side, as they are, first.
    const functions = await withClient(fromMigrations, async (c) => {
      const { rows } = await c.query<{ def: string }>(
        `SELECT pg_get_functiondef(oid) AS def FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND proname LIKE 'tally_raw_event_id%' ORDER BY proname DESC`,
      );
      return rows.map((r) => r.def);
    });
    expect(functions).toHaveLength(3);
    await withClient(fromSchema, async (c) => {
      await c.query("CREATE SEQUENCE raw_events_id_seq");
      for (const def of functions) await c.query(def);
      await c.query(ddl);
    });
    const [a, b] = [await catalog(fromMigrations), await catalog(fromSchema)];
    expect(a.columns.length).toBeGreaterThan(50);
    expect(a).toEqual(b);
  });

  it("records every migration in _prisma_migrations as Prisma does, and applies each only once", async () => {
    const url = await freshDatabase(`schema_r_${process.pid}`);
    const first = await migrate(url);
    const second = await migrate(url);
    const all = readMigrations();
    expect(first.applied).toEqual(all.map((m) => m.name));
    expect(second.applied).toEqual([]);
    const rows = await withClient(
      url,
      async (c) =>
        (
          await c.query(
            `SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name`,
          )
        ).rows,
    );
    expect(rows).toEqual(
      all.map((m) => ({
        migration_name: m.name,
        checksum: m.checksum,
        finished_at: expect.any(Date),
        applied_steps_count: 1,
      })),
    );
  });

  it("refuses to run over a migration edited after it was applied", async () => {
    const url = await freshDatabase(`schema_e_${process.pid}`);
    await migrate(url);
    await withClient(url, (c) =>
      c.query(`UPDATE _prisma_migrations SET checksum = 'x' WHERE migration_name = $1`, [readMigrations()[0]!.name]),
    );
    await expect(migrate(url)).rejects.toThrow(/was edited after it was applied/);
  });
});
