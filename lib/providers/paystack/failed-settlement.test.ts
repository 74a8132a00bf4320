// A Paystack settlement that failed (GET /settlement status "failed"): the money left
// the balance for the bank and came back. Read from the simulator's API it is a
// PAYOUT and a PAYOUT_FAILED line; through a run and the worker it is a PAYOUT posting
// and a PAYOUT_FAILED posting that returns the money to clearing, and the payout row is
// FAILED; a second run finds both posted and posts nothing. The same when a run first
// saw the settlement processing, posted its payout, and a later run sees it failed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { balancesByCode } from "@/lib/ledger/accounts";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import { paystackSettlement } from "@/lib/providers/paystack/settlement";
import { paystackFee, paystackScript } from "@/lib/providers/paystack/simulate";
import { seeded } from "@/lib/providers/simulation/random";
import type { SimMovement } from "@/lib/providers/simulation/script";
import type { SettlementLine } from "@/lib/providers/types";
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
const window = { from: new Date(dayStart * 1000), to: new Date((dayStart + 2 * DAY) * 1000) };

let server: http.Server;
let base: string;
const accounts = new PaystackAccounts();

/** A tenant whose day is two NGN payments, delivered and posted, paid out by one settlement. */
type Scenario = {
  tenant: TestTenant;
  settings: Record<string, unknown>;
  settlement: PaystackSettlement;
  payments: SimMovement[];
  /** What the settlement paid out: the payments less their fees. */
  paidOut: bigint;
  stl: string;
};

async function aScenario(n: number): Promise<Scenario> {
  const tenant = await aTenant();
  const secret = await anEndpoint(tenant, "paystack");
  const payment = (i: number, amount: number): SimMovement => ({
    tenant: tenant.slug,
    provider: "paystack",
    kind: "PAYMENT",
    reference: `T${String(serial * 100 + n * 10 + i).padStart(15, "0")}`,
    account: `acct_${i}`,
    amount,
    currency: "NGN",
    created: dayStart + (9 + i) * 3600,
  });
  const payments = [payment(1, 500_000), payment(2, 120_000)];
  const settlements = accounts.add(secret, payments).settlements(secret);
  expect(settlements).toHaveLength(1);
  const settings = { apiKey: secret, apiBaseUrl: base };
  await prisma.providerEndpoint.update({
    where: { tenantId_provider: { tenantId: tenant.id, provider: "paystack" } },
    data: { settings },
  });
  forgetEndpoints(tenant.slug);
  const r = seeded(11 + n);
  for (const m of payments)
    for (const e of paystackScript.events(m, r, false)) {
      const body = JSON.stringify(e);
      const res = await deliver(
        webhookRequest(tenant.slug, "paystack", body, { "x-paystack-signature": paystackSignature(body, secret) }),
      );
      expect(res.status).toBe(200);
    }
  await drainAll();
  return {
    tenant,
    settings,
    settlement: settlements[0]!,
    payments,
    paidOut: BigInt(payments.reduce((sum, p) => sum + p.amount - paystackFee(p), 0)),
    stl: `stl_${settlements[0]!.id}`,
  };
}

/** A run over the day, then the worker until nothing is left. */
async function reconcile(sc: Scenario): Promise<ReconSummary> {
  const r = await runReconciliation({
    tenantId: sc.tenant.id,
    provider: "paystack",
    window,
    source: { kind: "api" },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  await drainAll();
  return r.value;
}
const balance = async (sc: Scenario, code: string) =>
  (await balancesByCode(sc.tenant.id)).find((b) => b.code === code && b.currency === "NGN")?.amount ?? 0n;
const payoutRow = (sc: Scenario) =>
  prisma.payout.findFirstOrThrow({ where: { tenantId: sc.tenant.id, reference: sc.stl } });

/** The payout's postings with their legs by account, in order. */
async function payoutPostings(sc: Scenario) {
  const postings = await prisma.posting.findMany({
    where: { tenantId: sc.tenant.id, providerReference: { startsWith: sc.stl } },
    orderBy: { id: "asc" },
    include: { entries: { include: { account: true } } },
  });
  return postings.map((p) => [
    p.kind,
    p.providerReference,
    Object.fromEntries(p.entries.map((e) => [e.account.code, e.amount]).sort()),
  ]);
}
const outAndBack = (sc: Scenario) => [
  ["PAYOUT", sc.stl, { "bank:(unknown)": sc.paidOut, "clearing:paystack": -sc.paidOut }],
  ["PAYOUT_FAILED", `${sc.stl}:failed`, { "bank:(unknown)": -sc.paidOut, "clearing:paystack": sc.paidOut }],
];

/** Money back where it was: nothing at the bank, the payments' net on Paystack's balance, the payout FAILED. */
async function expectReturned(sc: Scenario) {
  expect(await payoutPostings(sc)).toEqual(outAndBack(sc));
  for (const reference of [sc.stl, `${sc.stl}:failed`]) {
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: sc.tenant.id, provider: "paystack", providerReference: reference },
    });
    expect(claim.status).toBe("DONE");
    expect(await prisma.rawEvent.findUniqueOrThrow({ where: { id: claim.rawEventId } })).toMatchObject({
      source: "SETTLEMENT",
      status: "DONE",
    });
  }
  expect(await balance(sc, "bank:(unknown)")).toBe(0n);
  expect(await balance(sc, "clearing:paystack")).toBe(sc.paidOut);
  expect(await payoutRow(sc)).toMatchObject({ status: "FAILED", ourAmount: sc.paidOut, theirAmount: sc.paidOut });
  // Its payments are still its lines, and they add up to what it paid out (and got back).
  expect((await getPayout(sc.tenant.id, "paystack", sc.stl))!.statement).toMatchObject({
    status: "FAILED",
    currency: "NGN",
    lines: 2,
    theirs: { payout: sc.paidOut, residual: 0n },
  });
  expect(await prisma.reconDiscrepancy.count({ where: { tenantId: sc.tenant.id } })).toBe(0);
  expect(await ledgerViolations()).toEqual([]);
}

const nothingNew = {
  postedFromSettlement: 0,
  feesPosted: 0,
  theirsNotOurs: 0,
  oursNotTheirs: 0,
  mismatched: 0,
  casesOpened: 0,
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (!servePaystackApi(req, res, accounts)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe("a Paystack settlement that failed when a run first sees it", () => {
  let sc: Scenario;
  let first: ReconSummary;
  beforeAll(async () => {
    sc = await aScenario(1);
    // Planted: the transfer to the bank failed, and Paystack says so on the settlement.
    sc.settlement.status = "failed";
    first = await reconcile(sc);
  });

  it("is read from the settlement API as its payout and the payout's return, both naming the settlement", async () => {
    const lines: SettlementLine[] = [];
    for await (const l of paystackSettlement.lines(
      { tenantId: sc.tenant.id, provider: "paystack", settings: sc.settings },
      window,
    ))
      lines.push(l);
    const view = (l: SettlementLine) => ({
      kind: l.kind,
      reference: l.reference,
      amount: l.amount,
      currency: l.currency,
      payout: l.payout,
      lineId: l.lineId,
    });
    const id = sc.settlement.id;
    expect(lines.filter((l) => l.kind === "PAYOUT" || l.kind === "PAYOUT_FAILED").map(view)).toEqual([
      {
        kind: "PAYOUT",
        reference: sc.stl,
        amount: -sc.paidOut,
        currency: "NGN",
        payout: sc.stl,
        lineId: `settlement:${id}`,
      },
      {
        kind: "PAYOUT_FAILED",
        reference: `${sc.stl}:failed`,
        amount: sc.paidOut,
        currency: "NGN",
        payout: sc.stl,
        lineId: `settlement:${id}:failed`,
      },
    ]);
    // Its payments are still the payout's lines: the statement is judged as any payout's.
    expect(lines.filter((l) => l.kind === "PAYMENT").map((l) => [l.reference, l.payout])).toEqual(
      sc.payments.map((p) => [p.reference, sc.stl]),
    );
  });

  it("is posted from the settlement through a run and the worker: out to the bank and back to clearing, the payout FAILED", async () => {
    expect(first).toMatchObject({
      matched: 2,
      feesPosted: 2,
      // The payout and its return: Paystack sends a webhook for neither.
      postedFromSettlement: 2,
      theirsNotOurs: 0,
      oursNotTheirs: 0,
      mismatched: 0,
      fetchFailed: 0,
      casesOpened: 0,
      payouts: 1,
      payoutResiduals: 0,
    });
    await expectReturned(sc);
  });

  it("a second run finds the payout and its return posted and posts nothing", async () => {
    const postings = await prisma.posting.count({ where: { tenantId: sc.tenant.id } });
    expect(await reconcile(sc)).toMatchObject(nothingNew);
    expect(await prisma.posting.count({ where: { tenantId: sc.tenant.id } })).toBe(postings);
    await expectReturned(sc);
  });
});

describe("a Paystack settlement a run saw processing and a later run sees failed", () => {
  it("is paid out by the first run, returned by the second, and the third posts nothing", async () => {
    const sc = await aScenario(2);
    sc.settlement.status = "processing";
    expect(await reconcile(sc)).toMatchObject({ postedFromSettlement: 1, payouts: 1, payoutResiduals: 0 });
    expect(await payoutPostings(sc)).toEqual(outAndBack(sc).slice(0, 1));
    expect(await payoutRow(sc)).toMatchObject({ status: "IN_TRANSIT", ourAmount: sc.paidOut });
    expect(await balance(sc, "bank:(unknown)")).toBe(sc.paidOut);

    sc.settlement.status = "failed";
    expect(await reconcile(sc)).toMatchObject({ ...nothingNew, postedFromSettlement: 1 });
    await expectReturned(sc);
    expect(await reconcile(sc)).toMatchObject(nothingNew);
    await expectReturned(sc);
  });
});
