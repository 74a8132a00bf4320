// The one database module: a Prisma client (query compiler + node-postgres
// adapter, no Rust engine) and the pg pool under it, shared per process.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { config } from "@/lib/platform/config";
import { embeddedUrl } from "@/lib/platform/embedded-postgres";
import { PrismaClient } from "@/lib/generated/prisma/client";

export { Prisma } from "@/lib/generated/prisma/client";
export type { PrismaClient } from "@/lib/generated/prisma/client";
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/** DATABASE_URL, else the embedded server's `tally` database on TALLY_PG_PORT. */
export function databaseUrl(): string {
  const c = config();
  return c.DATABASE_URL ?? embeddedUrl(c.TALLY_PG_PORT, "tally");
}

type Handles = { prisma: PrismaClient; pool: pg.Pool };
// Next.js dev reloads modules; keep one pool per process, not one per reload.
// The name too: the route handlers Next.js compiled load this module apart from workers/web.ts.
const holder = globalThis as typeof globalThis & { __tallyDb?: Handles; __tallyDbName?: string };

/** Names this process's database connections in pg_stat_activity ("tally-worker", "tally-web"); call before the first query. */
export function nameConnections(name: string): void {
  holder.__tallyDbName = name;
}

function open(): Handles {
  const pool = new pg.Pool({
    connectionString: databaseUrl(),
    application_name: holder.__tallyDbName ?? "tally",
    max: config().TALLY_DB_POOL_SIZE,
    // Fail fast when the database is down, so callers can answer 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process.
  pool.on("error", () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { prisma, pool };
}

function handles(): Handles {
  holder.__tallyDb ??= open();
  return holder.__tallyDb;
}

/** The Prisma client; created on first use so importing this module never connects. */
export const prisma: PrismaClient = new Proxy({} as PrismaClient, {
  get(_target, prop) {
    const client = handles().prisma as unknown as Record<string | symbol, unknown>;
    const value = client[prop];
    return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(client) : value;
  },
});

/** The pg pool under the Prisma client, for LISTEN/NOTIFY and COPY, which Prisma cannot do. */
export function pool(): pg.Pool {
  return handles().pool;
}

export async function closeDb(): Promise<void> {
  const h = holder.__tallyDb;
  holder.__tallyDb = undefined;
  if (!h) return;
  await h.prisma.$disconnect().catch(() => undefined);
  await h.pool.end().catch(() => undefined);
}

/** True for errors that mean "the database is unreachable", as opposed to a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = error;
  while (e && typeof e === "object" && !seen.has(e)) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (
      typeof code === "string" &&
      /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|57P0[1-3]|08\d\d\d|3D000|53300|P1001|P1002|P1017|P2024)$/.test(
        code,
      )
    )
      return true;
    if (
      typeof message === "string" &&
      /(connect|Connection terminated|timeout exceeded when trying to connect|does not allow connections|the database system is (starting|shutting) down|too many clients|Can't reach database)/i.test(
        message,
      )
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
