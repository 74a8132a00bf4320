// A balance is spread over BALANCE_SLOTS rows so that transactions committing at once
// do not wait for each other on one row: each takes a slot no other open transaction
// holds (applyBalances). The slot of the backend (pid % BALANCE_SLOTS), as the clearing
// balance had it, put two connections whose pids agree modulo 16 on one row for as long
// as they lived, and a customer's balance was one row; the test finds such a pair of
// connections and holds both transactions open.
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
  it("two transactions writing one clearing balance and one customer's at once, on backends the old pid slot put on one row, do not wait for each other", async () => {
    const code = `clearing:slots_${Date.now()}`;
    const customerCode = `customer:slots_${Date.now()}`;
    const ids = await prisma.$transaction((tx) =>
      ensureAccounts(tx, [
        { tenantId: tenant.id, code, kind: "PROVIDER_CLEARING" },
        { tenantId: tenant.id, code: customerCode, kind: "CUSTOMER" },
      ]),
    );
    const accountId = ids.get(`${tenant.id}|${code}`)!;
    const customerId = ids.get(`${tenant.id}|${customerCode}`)!;
    const write = async (c: pg.Client, amount: bigint) => {
      const net: Net = new Map([
        ["c", { accountId, currency: "USD", amount }],
        ["u", { accountId: customerId, currency: "USD", amount: -amount }],
      ]);
      const sql = balancesSql(net)!;
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
    expect(await balanceOf(tenant.id, customerCode, "USD")).toBe(-123n);
    const { rows } = await a.query<{ slots: number[] }>(
      "SELECT array_agg(slot ORDER BY slot) AS slots FROM balances WHERE account_id = ANY($1::bigint[]) GROUP BY account_id",
      [[accountId.toString(), customerId.toString()]],
    );
    // One row per transaction for each account, in the slot that transaction held for both
    // (the lowest free: 0 and 1, unless another test's commit held one at that moment).
    expect(rows).toHaveLength(2);
    expect(rows[0]!.slots).toHaveLength(2);
    expect(rows[1]!.slots).toEqual(rows[0]!.slots);
  });
});
