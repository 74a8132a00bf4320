// The "possible timing" flag and Tally's own report units.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { aStripePayment, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { reconcileStripeFile } from "@/dev/testing/recon-file";

const HOUR = 3600;
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-timing-"));
const from = Date.UTC(2026, 10, 20) / 1000;
const window = { from: new Date(from * 1000), to: new Date((from + 72 * HOUR) * 1000) };
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await aTenant();
  const margin = config().TALLY_RECON_TIMING_MARGIN_MS / 1000;
  expect(margin).toBeGreaterThan(HOUR);
  const payments = [
    aStripePayment({ reference: "pi_edge_start", created: from + HOUR - 1 }), // within the margin of the start
    aStripePayment({ reference: "pi_middle", created: from + 36 * HOUR }), // a day and a half from either edge
    aStripePayment({ reference: "pi_edge_end", created: from + 72 * HOUR - HOUR }), // within the margin of the end
    aStripePayment({ reference: "pi_settled", amount: 1250n, currency: "usd", created: from + 24 * HOUR }),
  ];
  for (const p of payments) expect((await deliver(stripeRequest(tenant, p))).status).toBe(200);
  await drainAll();
});

const report = (name: string, lines: string[]) => {
  const file = path.join(dir, name);
  writeFileSync(file, `${["reference,kind,amount,currency,occurred_at", ...lines].join("\n")}\n`);
  return file;
};

describe("ours-not-theirs near a window edge", () => {
  it("is flagged possible timing within the margin of either edge, and not in the middle of the window", async () => {
    const file = report("settled.csv", [
      `pi_settled,payment,12.50,USD,${new Date((from + 24 * HOUR) * 1000).toISOString()}`,
    ]);
    const r = await reconcileStripeFile(tenant.id, window, file);
    expect(r).toMatchObject({ ok: true, value: { matched: 1, oursNotTheirs: 3 } });
    const flags = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "OURS_NOT_THEIRS" },
      orderBy: { reference: "asc" },
      select: { reference: true, possibleTiming: true },
    });
    expect(flags).toEqual([
      { reference: "pi_edge_end", possibleTiming: true },
      { reference: "pi_edge_start", possibleTiming: true },
      { reference: "pi_middle", possibleTiming: false },
    ]);
  });
});

describe("Tally's own report format is major units with the currency's decimals", () => {
  const at = new Date((from + 24 * HOUR) * 1000).toISOString();
  it("reads 12.50 USD, 1500 JPY and 1.250 KWD as major units", async () => {
    const file = report("major.csv", [
      `pi_settled,payment,12.50,USD,${at}`,
      `pi_jpy,payment,1500,JPY,${at}`,
      `pi_kwd,payment,1.250,KWD,${at}`,
    ]);
    const r = await reconcileStripeFile(tenant.id, window, file);
    expect(r.ok).toBe(true);
    const theirs = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "THEIRS_NOT_OURS" },
      orderBy: { reference: "asc" },
      select: { reference: true, theirAmount: true },
    });
    expect(theirs).toEqual([
      { reference: "pi_jpy", theirAmount: 1500n },
      { reference: "pi_kwd", theirAmount: 1250n },
    ]);
  });

  for (const [amount, currency, says] of [
    ["1250", "USD", "this looks like minor units"],
    ["12.5", "USD", "exactly 2 decimals"],
    ["1500.00", "JPY", "exactly 0 decimals"],
  ] as const) {
    it(`refuses ${amount} ${currency}, naming row and column`, async () => {
      const file = report(`bad-${amount}-${currency}.csv`, [
        `pi_settled,payment,12.50,USD,${at}`,
        `pi_x,payment,${amount},${currency},${at}`,
      ]);
      const r = await reconcileStripeFile(tenant.id, window, file);
      expect(r).toMatchObject({
        ok: false,
        reason: "malformed_report",
        message: expect.stringContaining(`row 3, column "amount"`),
      });
      expect(!r.ok && r.message).toContain(says);
    });
  }
});
