// Direct access to the product's embedded database, for setting up states a
// browser cannot produce quickly (a claim that gave up) and for counting rows.
import pg from "pg";
import { embeddedUrl } from "../lib/platform/embedded-postgres";

export async function withDb<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: embeddedUrl(Number(process.env.TALLY_E2E_PG_PORT), "tally") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export const count = (sql: string, params: unknown[] = []) =>
  withDb(async (c) => Number((await c.query<{ n: string }>(sql, params)).rows[0]!.n));
