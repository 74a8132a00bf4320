// Fees, disputes, payouts and tolerance, one rule at a time, through the real route,
// the worker and Stripe's report format: what each posts (its accounts), what a
// fee the settlement disagrees with becomes, and what the endpoint's tolerance does.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { updateEndpointSettings } from "@/lib/admin/tenants";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { runReconciliation } from "@/lib/recon/run";
import { aStripePayment, aTenant, stripeRequest, type TestTenant, unique } from "@/dev/testing/builders";
import { drain, drainAll } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-fees-"));
const HEADER =
  "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_intent_id,charge_id,automatic_payout_id";
const at = (unix: number) => new Date(unix * 1000).toISOString().replace("T", " ").slice(0, 19);

async function send(event: object) {
  expect((await deliver(stripeRequest(tenant, event))).status).toBe(200);
}
async function reconcile(rows: string[]) {
  const file = path.join(dir, `${unique("report-")}.csv`);
  writeFileSync(file, `${[HEADER, ...rows].join("\n")}\n`);
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "stripe",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}
/** Balances by "code CURRENCY"; an account that never moved, or moved back to zero, reads 0. */
const balances = async () => {
  const found = new Map((await balancesByCode(tenant.id)).map((b) => [`${b.code} ${b.currency}`, b.amount]));
  return new Proxy({} as Record<string, bigint>, { get: (_t, k) => found.get(String(k)) ?? 0n });
};
const event = (type: string, object: Record<string, unknown>, created = now) => ({
  id: unique("evt_"),
  object: "event",
  type,
  created,
  data: { object },
});

let tenant: TestTenant;
const now = Math.floor(Date.now() / 1000) - 3600;

beforeAll(async () => {
  tenant = await aTenant();
});

describe("disputes and payouts from Stripe's webhooks", () => {
  it("a dispute withdraws from clearing into disputes:stripe; reinstated, it comes back; a lost one stays", async () => {
    const pay = aStripePayment({ amount: 5000, created: now });
    await send(pay);
    const dispute = {
      id: unique("dp_"),
      object: "dispute",
      amount: 5000,
      currency: "usd",
      charge: "ch_x",
      payment_intent: pay.data.object.id,
      status: "needs_response",
      created: now,
    };
    await send(event("charge.dispute.funds_withdrawn", dispute));
    // A retry of the withdrawal and a closed event move nothing more.
    await send(event("charge.dispute.funds_withdrawn", dispute));
    await send(event("charge.dispute.closed", { ...dispute, status: "lost" }));
    await drainAll();
    let b = await balances();
    expect([b["disputes:stripe USD"], b["clearing:stripe USD"]]).toEqual([5000n, 0n]);
    await send(event("charge.dispute.funds_reinstated", { ...dispute, status: "won" }));
    await drainAll();
    b = await balances();
    expect([b["disputes:stripe USD"], b["clearing:stripe USD"]]).toEqual([0n, 5000n]);
    const kinds = await prisma.posting.findMany({
      where: { tenantId: tenant.id, providerReference: { startsWith: dispute.id } },
      select: { kind: true, providerReference: true },
      orderBy: { id: "asc" },
    });
    expect(kinds).toEqual([
      { kind: "DISPUTE", providerReference: dispute.id },
      { kind: "DISPUTE_REVERSAL", providerReference: `${dispute.id}:reinstated` },
    ]);
  });

  it("a payout moves clearing to bank:<destination> and records the payout; a failure returns it and marks it FAILED, and waits for its payout", async () => {
    const before = await balances();
    const payout = {
      id: unique("po_"),
      object: "payout",
      amount: 3000,
      currency: "usd",
      arrival_date: now + 2 * 86_400,
      destination: "ba_test",
      status: "paid",
      created: now,
    };
    // The failure arrives first: it waits for its payout rather than returning money that never left.
    await send(event("payout.failed", { ...payout, status: "failed" }));
    await drain();
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, kind: "PAYOUT_FAILED" } })).toBe(0);
    await send(event("payout.paid", payout));
    await drainAll();
    const row = await prisma.payout.findUniqueOrThrow({
      where: { tenantId_provider_reference: { tenantId: tenant.id, provider: "stripe", reference: payout.id } },
    });
    expect(row).toMatchObject({ status: "FAILED", ourAmount: 3000n, destination: "ba_test", currency: "USD" });
    expect(row.arrivalDate?.toISOString().slice(0, 10)).toBe(
      new Date((now + 2 * 86_400) * 1000).toISOString().slice(0, 10),
    );
    const after = await balances();
    expect(after["bank:ba_test USD"]).toBe(0n);
    expect(after["clearing:stripe USD"]).toBe(before["clearing:stripe USD"]);
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: payout.id } })).toBe(1);
    expect(await ledgerViolations()).toEqual([]);
  });
});

describe("fees from the settlement", () => {
  it("posts a fee the ledger lacks, matches it next time, and makes a fee that then disagrees a case", async () => {
    const pay = aStripePayment({ amount: 2000, created: now });
    const pi = pay.data.object.id;
    await send(pay);
    await drainAll();
    const line = (fee: string, id = unique("txn_")) =>
      `${id},${at(now)},usd,20.00,${fee},20.00,charge,ch_1,${pi},ch_1,`;
    const first = await reconcile([line("0.88")]);
    expect(first).toMatchObject({ matched: 1, feesPosted: 1, theirsNotOurs: 0, mismatched: 0 });
    await drainAll();
    expect((await balances())["fees:stripe USD"]).toBe(88n);
    const fee = await prisma.posting.findFirstOrThrow({
      where: { tenantId: tenant.id, providerReference: `${pi}:fee` },
    });
    expect(fee.kind).toBe("FEE");
    expect(
      (
        await prisma.rawEvent.findFirstOrThrow({
          where: {
            id: (await prisma.processedEvent.findUniqueOrThrow({ where: { id: fee.processedEventId! } })).rawEventId,
          },
        })
      ).source,
    ).toBe("SETTLEMENT");

    const again = await reconcile([line("0.88")]);
    expect(again).toMatchObject({ matched: 1, feesPosted: 0, mismatched: 0, casesOpened: 0 });

    const differs = await reconcile([line("0.95")]);
    expect(differs).toMatchObject({ mismatched: 1, casesOpened: 1, feesPosted: 0 });
    const d = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, reference: `${pi}:fee` },
      include: { case: true },
    });
    expect(d).toMatchObject({ bucket: "MISMATCH", cause: "FEE", theirAmount: -95n, ourAmount: -88n });
    expect(d.case).toMatchObject({ kind: "MISMATCH", status: "OPEN" });
  });
});

describe("the endpoint's tolerance", () => {
  it("a difference within it matches as WITHIN_TOLERANCE, listed and resolved; past it, or with none, it is a mismatch", async () => {
    // A second of its own: a report's window is its lines' span, and other tests' payments are at \`now\`.
    const t = now + 120;
    const pay = aStripePayment({ amount: 1000, created: t });
    const pi = pay.data.object.id;
    await send(pay);
    await drainAll();
    const line = `${unique("txn_")},${at(t)},usd,10.03,0.00,10.03,charge,ch_2,${pi},ch_2,`;
    const strict = await reconcile([line]);
    expect(strict).toMatchObject({ mismatched: 1, withinTolerance: 0, casesOpened: 1 });

    const set = await updateEndpointSettings(
      tenant.slug,
      "stripe",
      { matchRules: { toleranceMinor: 5n } },
      SYSTEM_ACTOR,
    );
    expect(set.ok && set.value.matchRules.toleranceMinor).toBe(5n);
    const tolerant = await reconcile([line]);
    expect(tolerant).toMatchObject({ mismatched: 0, withinTolerance: 1, matched: 1, casesOpened: 0 });
    const within = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, reference: pi, bucket: "WITHIN_TOLERANCE" },
    });
    expect(within).toMatchObject({ state: "RESOLVED", theirAmount: 1003n, ourAmount: 1000n });
    expect(within.note).toContain("within the tolerance of 5 minor units");
    // The mismatch found before the tolerance was set is closed by the tolerant match, with its case.
    const mismatch = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, reference: pi, bucket: "MISMATCH" },
      include: { case: true },
    });
    expect(mismatch).toMatchObject({ state: "RESOLVED", case: { status: "RESOLVED" } });
    const run = await prisma.reconRun.findUniqueOrThrow({ where: { id: tolerant.runId } });
    expect(run).toMatchObject({ withinTolerance: 1, rules: { toleranceMinor: "5" } });

    const refused = await updateEndpointSettings(
      tenant.slug,
      "stripe",
      { matchRules: { dateLagDays: 99 } },
      SYSTEM_ACTOR,
    );
    expect(refused).toMatchObject({ ok: false, reason: "invalid_match_rules" });
  });
});

describe("a payout's statement", () => {
  it("a payout its lines do not add up to opens a PAYOUT_RESIDUAL case; the corrected report closes it, audited", async () => {
    const t = now + 240;
    const pay = aStripePayment({ amount: 10_000, created: t });
    const pi = pay.data.object.id;
    const po = unique("po_");
    await send(pay);
    await send(
      event(
        "payout.paid",
        {
          id: po,
          object: "payout",
          amount: 9_600,
          currency: "usd",
          destination: "ba_test",
          status: "paid",
          created: t + 1,
        },
        t + 1,
      ),
    );
    await drainAll();
    const charge = `${unique("txn_")},${at(t)},usd,100.00,3.20,96.80,charge,ch_3,${pi},ch_3,${po}`;
    const payoutLine = (gross: string) => `txn_${po},${at(t + 1)},usd,${gross},0.00,${gross},payout,${po},,,${po}`;
    // Stripe's report says the payout was 96.00, which is also what payout.paid said; its line nets 96.80.
    const short = await reconcile([charge, payoutLine("-96.00")]);
    expect(short).toMatchObject({ payouts: 1, payoutResiduals: 1, feesPosted: 1, mismatched: 0 });
    const d = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, reference: po, bucket: "PAYOUT_RESIDUAL" },
      include: { case: true },
    });
    expect(d).toMatchObject({ cause: "PAYOUT_RESIDUAL", theirAmount: 9_600n, ourAmount: 9_680n, state: "OPEN" });
    expect(d.case).toMatchObject({ kind: "PAYOUT_RESIDUAL", status: "OPEN" });
    expect(d.theirLine).toMatchObject({
      lines: expect.arrayContaining([expect.objectContaining({ reference: pi, fee: "320" })]),
    });

    // The same report again finds the same residual: no second case.
    expect(await reconcile([charge, payoutLine("-96.00")])).toMatchObject({ payoutResiduals: 1, casesOpened: 0 });
    expect(await prisma.case.count({ where: { tenantId: tenant.id, kind: "PAYOUT_RESIDUAL" } })).toBe(1);

    // Stripe's corrected report: the lines and the payout agree.
    const fixed = await reconcile([charge, payoutLine("-96.80")]);
    expect(fixed).toMatchObject({ payouts: 1, payoutResiduals: 0 });
    const closed = await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: d.id }, include: { case: true } });
    expect(closed).toMatchObject({ state: "RESOLVED", case: { status: "RESOLVED" } });
    expect(closed.case!.resolution).toContain("balanced on re-check");
    const audit = await prisma.auditLog.findFirstOrThrow({
      where: { tenantId: tenant.id, action: "case.close", subjectId: String(closed.case!.id) },
    });
    expect(audit).toMatchObject({
      actorType: "SYSTEM",
      details: { discrepancyId: String(d.id), runId: String(fixed.runId) },
    });
    expect(audit.reason).toContain("statement balances");
  });
});
