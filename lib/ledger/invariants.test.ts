// The ledger's invariants with balances spread over slots: every reader sums them,
// and `tally ledger verify` names a balance that no longer equals its entries.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { balanceOf, balancesByCode, getAccount, listAccounts } from "@/lib/ledger/accounts";
import { exportLedger } from "@/lib/ledger/export";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { Prisma, prisma } from "@/lib/platform/db";
import { aStripePayment, aStripeRefund, stripeRequest } from "@/dev/testing/builders";
import { fileTenant } from "@/dev/testing/file-tenant";
import { drain } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const tenant = fileTenant();

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], {
    encoding: "utf8",
    env: process.env,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("balances in slots", () => {
  it("are summed by every reader, hold the invariants, and a corrupted slot is named by ledger verify", async () => {
    const payment = aStripePayment({ amount: 900n, account: "acct_slots" });
    for (const event of [payment, aStripePayment({ amount: 100n, account: "acct_slots" })])
      expect((await deliver(stripeRequest(tenant, event))).status).toBe(200);
    await drain();
    expect(
      (await deliver(stripeRequest(tenant, aStripeRefund({ payment: payment.data.object.id, amount: 250 })))).status,
    ).toBe(200);
    await drain();
    const clearing = await prisma.account.findFirstOrThrow({ where: { tenantId: tenant.id, code: "clearing:stripe" } });
    // Spread the clearing balance over three slots, as replicas committing at once leave it.
    await prisma.$executeRaw(Prisma.sql`
      WITH moved AS (UPDATE balances SET amount = amount - 1000 WHERE account_id = ${clearing.id} RETURNING currency)
      INSERT INTO balances (account_id, currency, slot, amount)
      SELECT ${clearing.id}, currency, s.slot, s.amount FROM moved, (VALUES (61::smallint, 700::bigint), (62::smallint, 300::bigint)) AS s(slot, amount)
      ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount`);
    expect(await prisma.balance.count({ where: { accountId: clearing.id } })).toBeGreaterThanOrEqual(3);

    expect(await ledgerViolations(tenant.id)).toEqual([]);
    expect(await balanceOf(tenant.id, "clearing:stripe", "USD")).toBe(750n);
    expect(await balancesByCode(tenant.id)).toEqual([
      { code: "clearing:stripe", currency: "USD", amount: 750n },
      { code: "customer:acct_slots", currency: "USD", amount: -750n },
    ]);
    expect((await getAccount(tenant.id, clearing.id))!.balances).toEqual([
      { currency: "USD", amount: 750n, updatedAt: expect.any(Date) },
    ]);
    const listed = await listAccounts({ tenantId: tenant.id, code: "clearing" });
    expect(listed.accounts.map((a) => a.balances.map((b) => b.amount))).toEqual([[750n]]);
    expect((await exportLedger(tenant.id, tenant.slug)).balances).toEqual([
      { account: "clearing:stripe", currency: "USD", amount: "750" },
      { account: "customer:acct_slots", currency: "USD", amount: "-750" },
    ]);
    const clean = tally("ledger", "verify", "--tenant", tenant.slug);
    expect(clean).toMatchObject({ code: 0, out: expect.stringContaining("no violations") });

    // One slot off by one minor unit: the sum no longer equals the entries.
    await prisma.$executeRaw(
      Prisma.sql`UPDATE balances SET amount = amount + 1 WHERE account_id = ${clearing.id} AND slot = 62`,
    );
    expect(await ledgerViolations(tenant.id)).toEqual([
      {
        invariant: "balance equals the sum of its entries",
        detail: `account ${clearing.id} USD: balance 751, entries 750`,
      },
    ]);
    const broken = tally("ledger", "verify", "--tenant", tenant.slug);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain(
      `balance equals the sum of its entries: account ${clearing.id} USD: balance 751, entries 750`,
    );
    expect(broken.err).toContain(`1 ledger invariant violation(s) in tenant ${tenant.slug}`);
    await prisma.$executeRaw(
      Prisma.sql`UPDATE balances SET amount = amount - 1 WHERE account_id = ${clearing.id} AND slot = 62`,
    );
    expect(tally("ledger", "verify", "--tenant", "no-such-tenant").code).not.toBe(0);
  }, 300_000); // four CLI processes, each starting tsx: seconds apiece on a loaded machine
});
