// Stripe's itemized balance report, as Stripe publishes it (fixtures/: the columns of
// balance_change_from_activity.itemized.3 in their published order, run with a
// timezone so `created` is local), reconciled against payments that arrived as webhooks.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { runReconciliation } from "@/lib/recon/run";
import { lineOf } from "@/lib/providers/stripe/settlement";
import { aStripePayment, aStripeRefund, aTenant, stripeRequest, type TestTenant } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const FIXTURE = path.join(import.meta.dirname, "fixtures", "balance_change_from_activity.itemized.3.csv");
const dir = mkdtempSync(path.join(os.tmpdir(), "tally-stripe-report-"));
const at = (hour: number) => Math.floor(Date.UTC(2026, 11, 1, hour) / 1000);
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await aTenant();
  // What the webhooks posted, in the customer's currency and Stripe's integer units.
  const payments = [
    aStripePayment({ reference: "pi_fx_eur", amount: 10000n, currency: "eur", created: at(10) }),
    aStripePayment({ reference: "pi_fx_pcr", amount: 3000n, currency: "usd", created: at(11) }), // 50.00 authorised, 30.00 captured
    aStripePayment({ reference: "pi_fx_mga", amount: 5000n, currency: "mga", created: at(14) }), // zero-decimal at Stripe
    aStripePayment({ reference: "pi_fx_isk", amount: 150000n, currency: "isk", created: at(15) }), // ×100 at Stripe
  ];
  const refund = aStripeRefund({ reference: "re_fx_failed", payment: "pi_fx_eur", amount: 1000, currency: "eur" });
  refund.data.object.created = at(12);
  for (const e of [...payments, refund]) expect((await deliver(stripeRequest(tenant, e))).status).toBe(200);
  await drainAll();
});

async function run(file: string) {
  return runReconciliation({
    tenantId: tenant.id,
    provider: "stripe",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
}

describe("Stripe's itemized balance report as published", () => {
  it("compares in the posting's currency and units: a charge settled in USD for a EUR payment, a partial capture, MGA and ISK all match", async () => {
    const r = await run(FIXTURE);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // 5 payment and refund references compared; the refund whose refund failed is the one mismatch.
    // The dispute and the payout came with no webhook: theirs-not-ours (the dispute posted from the
    // settlement, in the customer's currency like the charge; the payout asked of Stripe's API).
    expect(r.value).toMatchObject({
      compared: 7,
      matched: 4,
      mismatched: 1,
      theirsNotOurs: 2,
      oursNotTheirs: 0,
      postedFromSettlement: 1,
    });
    // The charges' fees, the dispute's fee and the Radar fee line, in the settlement's currency.
    expect(r.value.feesPosted).toBe(6);
    const mismatch = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, bucket: "MISMATCH" },
    });
    // The refund and its failure net to zero: the customer was never refunded, though we posted it.
    expect(mismatch).toMatchObject({
      reference: "re_fx_failed",
      theirAmount: 0n,
      theirCurrency: "EUR",
      ourAmount: -1000n,
    });
  });

  it("counts and lists on the run the lines it does not reconcile (the refund failure); fees, disputes and payouts it does", async () => {
    const r = await run(FIXTURE);
    if (!r.ok) throw new Error(r.message);
    expect(r.value.notReconciled).toBe(1);
    const stored = await prisma.reconRun.findUniqueOrThrow({ where: { id: r.value.runId } });
    expect(stored.notReconciled).toBe(1);
    expect(stored.notReconciledLines).toEqual([
      expect.objectContaining({
        row: 6,
        category: "refund_failure",
        reference: "re_fx_failed",
        amount: "1000",
        currency: "EUR",
      }),
    ]);
  });

  it("dates lines by created_utc, not by the report's local created", async () => {
    const r = await run(FIXTURE);
    if (!r.ok) throw new Error(r.message);
    expect(r.value.window.from.toISOString()).toBe("2026-12-01T10:00:00.000Z");
  });

  it("refuses a file with only the local `created`, naming created_utc", async () => {
    const file = path.join(dir, "local-only.csv");
    const lines = readFileSync(FIXTURE, "utf8").split("\r\n");
    const drop = (line: string) =>
      line
        .split(",")
        .filter((_, i) => i !== 1)
        .join(",");
    writeFileSync(file, `${[drop(lines[0]!), drop(lines[2]!)].join("\n")}\n`);
    const r = await run(file);
    expect(r).toMatchObject({
      ok: false,
      reason: "malformed_report",
      message: expect.stringContaining('column "created_utc"'),
    });
  });

  it("refuses a file without payment_intent_id (charges would be keyed by ch_…), naming it", async () => {
    const file = path.join(dir, "no-intent.csv");
    writeFileSync(
      file,
      `${[
        "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id",
        "txn_1,2026-12-01 10:00:00,usd,108.50,3.45,105.05,charge,ch_fx_eur,ch_fx_eur",
      ].join("\n")}\n`,
    );
    const r = await run(file);
    expect(r).toMatchObject({
      ok: false,
      reason: "malformed_report",
      message: expect.stringContaining('column "payment_intent_id"'),
    });
  });

  it("the spec's file in another name and the same bytes gives the same counts", async () => {
    const copy = path.join(dir, "copy.csv");
    copyFileSync(FIXTURE, copy);
    const r = await run(copy);
    expect(r.ok && r.value).toMatchObject({ matched: 4, mismatched: 1, notReconciled: 1 });
  });
});

describe("Stripe's balance transactions API", () => {
  it("compares a cross-currency charge in the charge's currency, from the expanded source, keeping the settlement amount as evidence", () => {
    const t = {
      id: "txn_api_1",
      amount: 10850,
      currency: "usd",
      created: at(10),
      reporting_category: "charge",
      source: {
        id: "ch_1",
        object: "charge",
        payment_intent: "pi_1",
        amount: 10000,
        amount_captured: 10000,
        currency: "eur",
      },
    };
    const line = lineOf(t, 1);
    expect(line).toMatchObject({ reference: "pi_1", kind: "PAYMENT", amount: 10000n, currency: "EUR" });
    expect(JSON.parse(line.raw)).toMatchObject({ amount: 10850, currency: "usd" });
    const reversal = lineOf(
      {
        ...t,
        id: "txn_api_2",
        amount: -2170,
        reporting_category: "partial_capture_reversal",
        source: { ...t.source, amount_captured: 8000 },
      },
      2,
    );
    expect(reversal).toMatchObject({ reference: "pi_1", kind: "PAYMENT", amount: -2000n, currency: "EUR" });
    const refundFailure = lineOf(
      {
        ...t,
        id: "txn_api_3",
        amount: 1085,
        reporting_category: "refund_failure",
        source: { id: "re_1", object: "refund", amount: 1000, currency: "eur" },
      },
      3,
    );
    expect(refundFailure).toMatchObject({
      reference: "re_1",
      kind: "REFUND",
      amount: 1000n,
      currency: "EUR",
      notReconciled: "refund_failure",
    });
    expect(
      lineOf({ ...t, amount: 150000, currency: "isk", source: { ...t.source, amount: 150000, currency: "isk" } }, 4),
    ).toMatchObject({ amount: 1500n, currency: "ISK" });
  });
});
