// Paystack to the payout: a day's charges, a refund and three disputes delivered
// through the signed route and the worker, then reconciled against the simulator's
// Paystack API (transactions with fees, refunds, disputes, settlements and each
// settlement's transactions). Two defects are planted: a lost dispute whose webhook
// never came, and a settlement paid 1.00 short. Each must end as exactly one outcome.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import { paystackDisputeEvents, paystackFee, paystackScript, type SimDispute } from "@/lib/providers/paystack/simulate";
import { seeded } from "@/lib/providers/simulation/random";
import type { SimMovement } from "@/lib/providers/simulation/script";
import { getPayout } from "@/lib/recon/payouts";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { PaystackAccounts, type PaystackSettlement, servePaystackApi } from "@/dev/simulator/paystack-api";
import { aTenant, type TestTenant, webhookRequest } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anEndpoint, paystackSignature } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

const DAY = 86_400;
const dayStart = Math.floor(Date.now() / 1000 / DAY) * DAY - 5 * DAY;
const serial = Date.now() % 1_000_000;
const ref = (i: number) => `T${String(serial * 100 + i).padStart(15, "0")}`;

let tenant: TestTenant;
let secret: string;
let server: http.Server;
let accounts: PaystackAccounts;
let summary: ReconSummary;

const payment = (i: number, amount: number, currency = "NGN", hour = 9 + i): SimMovement => ({
  tenant: "",
  provider: "paystack",
  kind: "PAYMENT",
  reference: ref(i),
  account: `acct_${i}`,
  amount,
  currency,
  created: dayStart + hour * 3600,
});
const p1 = payment(1, 500_000);
const p2 = payment(2, 120_000);
const p3 = payment(3, 80_000);
const p4 = payment(4, 60_000);
const g1 = payment(5, 40_000, "GHS");
const refund: SimMovement = {
  ...p2,
  kind: "REFUND",
  reference: String(3_500_000 + (serial % 100_000)),
  paymentReference: p2.reference,
  amount: 20_000,
  created: dayStart + 15 * 3600,
};
const dispute = (n: number, payment: SimMovement, o: Partial<SimDispute>): SimDispute => ({
  id: 700_000 + (serial % 100_000) * 10 + n,
  payment,
  refundAmount: payment.amount,
  outcome: "lost",
  created: dayStart + 16 * 3600,
  resolved: dayStart + 20 * 3600,
  ...o,
});
const lost = dispute(1, p3, { refundAmount: 30_000 });
const won = dispute(2, p4, { outcome: "won" });
/** Planted: lost, and its webhooks never delivered; only the Disputes API knows it. */
const unannounced = dispute(3, p1, { refundAmount: 100_000 });

const settlementIn = (currency: string) =>
  accounts.settlements(secret).find((s) => s.currency === currency) as PaystackSettlement;

async function send(event: object) {
  const body = JSON.stringify(event);
  const res = await deliver(
    webhookRequest(tenant.slug, "paystack", body, { "x-paystack-signature": paystackSignature(body, secret) }),
  );
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  tenant = await aTenant();
  secret = await anEndpoint(tenant, "paystack");
  const movements = [p1, p2, p3, p4, g1, refund].map((m) => ({ ...m, tenant: tenant.slug }));
  accounts = new PaystackAccounts().add(secret, movements, { disputes: [lost, won, unannounced] });
  // Planted: Paystack paid the GHS settlement 1.00 (100 pesewas) less than its lines net.
  settlementIn("GHS").effective_amount -= 100;
  server = http.createServer((req, res) => {
    if (!servePaystackApi(req, res, accounts)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await prisma.providerEndpoint.update({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "paystack" } },
    data: {
      settings: { apiKey: secret, apiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    },
  });
  forgetEndpoints(tenant.slug);

  const r = seeded(7);
  for (const m of movements) for (const e of paystackScript.events(m, r, false)) await send(e);
  for (const d of [lost, won]) for (const e of paystackDisputeEvents(d)) await send(e);
  await drainAll();

  const run = await runReconciliation({
    tenantId: tenant.id,
    provider: "paystack",
    window: { from: new Date(dayStart * 1000), to: new Date((dayStart + 2 * DAY) * 1000) },
    source: { kind: "api" },
    actor: SYSTEM_ACTOR,
  });
  if (!run.ok) throw new Error(run.message);
  summary = run.value;
  await drainAll();
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe("reconciling Paystack to the payout", () => {
  it("posts every fee and both settlements from the settlement, and the dispute whose webhook never came; one case, for the short payout", async () => {
    expect(summary).toMatchObject({
      // 5 charges + 1 refund + 2 lost disputes + 2 settlements, each fee its own item.
      matched: 7,
      feesPosted: 5,
      postedFromSettlement: 3,
      // The dispute whose webhook never came; the settlements are expected from the API.
      theirsNotOurs: 1,
      oursNotTheirs: 0,
      mismatched: 0,
      fetchFailed: 0,
      payouts: 2,
      payoutResiduals: 1,
    });
    const fees = (await balancesByCode(tenant.id)).filter((b) => b.code === "fees:paystack");
    expect(fees.map((b) => `${b.currency} ${b.amount}`).sort()).toEqual([
      `GHS ${paystackFee(g1)}`,
      `NGN ${[p1, p2, p3, p4].reduce((s, p) => s + paystackFee(p), 0)}`,
    ]);
    const disputes = (await balancesByCode(tenant.id)).find((b) => b.code === "disputes:paystack");
    expect(disputes?.amount).toBe(BigInt(lost.refundAmount + unannounced.refundAmount));
    expect(await ledgerViolations()).toEqual([]);
  });

  it("the dispute whose webhook never came is found, posted from the settlement once, and needs no case", async () => {
    const d = await prisma.reconDiscrepancy.findFirstOrThrow({
      where: { tenantId: tenant.id, reference: `dsp_${unannounced.id}` },
      include: { case: true },
    });
    expect(d).toMatchObject({
      bucket: "THEIRS_NOT_OURS",
      cause: "NEVER_DELIVERED",
      state: "FETCHED",
      theirAmount: -100_000n,
      case: null,
    });
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: d.rawEventId! } })).toMatchObject({
      source: "SETTLEMENT",
      status: "DONE",
    });
    expect(
      await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: `dsp_${unannounced.id}` } }),
    ).toBe(1);
  });

  it("the NGN settlement is a payout whose statement balances to zero on both sides, line by line", async () => {
    const s = settlementIn("NGN");
    const found = await getPayout(tenant.id, "paystack", `stl_${s.id}`);
    expect(found).not.toBeNull();
    // Paystack has no payout webhook: the settlement is expected from its API, never a theirs-not-ours.
    expect(
      await prisma.reconDiscrepancy.count({
        where: { tenantId: tenant.id, reference: { startsWith: "stl_" }, bucket: "THEIRS_NOT_OURS" },
      }),
    ).toBe(0);
    const { statement, lines } = found!;
    const fees = [p1, p2, p3, p4].reduce((sum, p) => sum + paystackFee(p), 0);
    const theirs = {
      gross: BigInt(p1.amount + p2.amount + p3.amount + p4.amount),
      refunds: -BigInt(refund.amount),
      fees: -BigInt(fees),
      disputes: -BigInt(lost.refundAmount + unannounced.refundAmount),
      adjustments: 0n,
      payout: BigInt(s.effective_amount),
      residual: 0n,
    };
    expect(statement).toMatchObject({
      currency: "NGN",
      destination: null,
      lines: 7,
      theirs,
      ours: theirs,
    });
    expect(statement.arrivalDate?.toISOString().slice(0, 10)).toBe(s.settlement_date.slice(0, 10));
    expect(lines.map((l) => [l.kind, l.agrees]).sort()).toEqual(
      [
        ["DISPUTE", true],
        ["DISPUTE", true],
        ["PAYMENT", true],
        ["PAYMENT", true],
        ["PAYMENT", true],
        ["PAYMENT", true],
        ["REFUND", true],
      ].sort(),
    );
    const bank = (await balancesByCode(tenant.id)).find((b) => b.code === "bank:(unknown)" && b.currency === "NGN");
    expect(bank?.amount).toBe(BigInt(s.effective_amount));
  });

  it("the settlement paid 1.00 short ends as exactly one PAYOUT_RESIDUAL case, residual −100", async () => {
    const s = settlementIn("GHS");
    const residuals = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: tenant.id, bucket: "PAYOUT_RESIDUAL" },
      include: { case: true },
    });
    expect(residuals).toHaveLength(1);
    expect(residuals[0]).toMatchObject({
      reference: `stl_${s.id}`,
      cause: "PAYOUT_RESIDUAL",
      theirAmount: BigInt(s.effective_amount),
      ourAmount: BigInt(s.effective_amount + 100),
      case: { kind: "PAYOUT_RESIDUAL", status: "OPEN" },
    });
    const { statement } = (await getPayout(tenant.id, "paystack", `stl_${s.id}`))!;
    expect(statement.theirs.residual).toBe(-100n);
    // Nothing else is a case: the NGN payout balanced, the won dispute moved nothing.
    expect(await prisma.case.count({ where: { tenantId: tenant.id } })).toBe(1);
    expect(await prisma.posting.count({ where: { tenantId: tenant.id, providerReference: `dsp_${won.id}` } })).toBe(0);
  });
});
