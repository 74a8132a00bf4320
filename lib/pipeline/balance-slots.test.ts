// A hot balance (a tenant's clearing account) is spread over BALANCE_SLOTS rows so that
// transactions committing at once do not wait for each other on one row: each takes a
// slot no other open transaction holds (applyBalances). The slot of the backend
// (pid % BALANCE_SLOTS), as it was, put two connections whose pids agree modulo 16 on
// one row for as long as they lived; the test finds such a pair and holds both open.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { balancesSql, type Net } from "@/lib/pipeline/commit";
import { BALANCE_SLOTS, ensureAccounts } from "@/lib/ledger/postings";
import { databaseUrl, prisma } from "@/lib/platform/db";
import { balanceOf } from "@/lib/ledger/accounts";
import { fileTenant } from "@/dev/testing/file-tenant";

const tenant = fileTenant();
const clients: pg.Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
});

/** Connections until two have backends whose pids agree modulo BALANCE_SLOTS (17 at most). */
async function collidingPair(): Promise<[pg.Client, pg.Client]> {
  const bySlot = new Map<number, pg.Client>();
  for (;;) {
    const c = new pg.Client({ connectionString: databaseUrl() });
    await c.connect();
    clients.push(c);
    const { rows } = await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const slot = rows[0]!.pid % BALANCE_SLOTS;
    const other = bySlot.get(slot);
    if (other) return [other, c];
    bySlot.set(slot, c);
  }
}

describe("hot balance slots", () => {
  it("two transactions writing one hot balance at once, on backends the old pid slot put on one row, do not wait for each other", async () => {
    const code = `clearing:slots_${Date.now()}`;
    const ids = await prisma.$transaction((tx) =>
      ensureAccounts(tx, [{ tenantId: tenant.id, code, kind: "PROVIDER_CLEARING" }]),
    );
    const accountId = ids.get(`${tenant.id}|${code}`)!;
    const write = async (c: pg.Client, amount: bigint) => {
      const net: Net = new Map([["k", { accountId, currency: "USD", amount }]]);
      const sql = balancesSql(net, new Set([accountId]))!;
      await c.query(sql.text, sql.values as unknown[]);
    };
    const [a, b] = await collidingPair();
    await a.query("BEGIN");
    await write(a, 100n);
    // a holds its row until COMMIT; b must find a row of its own, not wait for a's.
    await b.query("BEGIN");
    await b.query("SET LOCAL lock_timeout = '2s'");
    await write(b, 23n);
    await b.query("COMMIT");
    await a.query("COMMIT");
    expect(await balanceOf(tenant.id, code, "USD")).toBe(123n);
    const { rows } = await a.query<{ n: string }>("SELECT count(*) AS n FROM balances WHERE account_id = $1", [
      accountId.toString(),
    ]);
    expect(Number(rows[0]!.n)).toBe(2);
  });
});
