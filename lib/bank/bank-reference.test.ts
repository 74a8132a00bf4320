// A payout's bank reference: the text the provider says its transfer carries to the
// bank, which for Adyen is not our key (<merchant account>:batch:<n>:<currency> never
// reaches the bank) but the MerchantPayout's Modification Reference ("TX… batch 7,
// <merchant account>"). From the Settlement Details Report through a run and the
// worker to the payout row, its page's read model and the API; then the bank step
// telling two credits of one amount on one day apart by it.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as getPayoutRoute } from "@/app/api/v1/tenants/[tenant]/payouts/[id]/route";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { importBankStatement, type ImportSummary } from "@/lib/bank/import";
import { MIN_REFERENCE_CHARS } from "@/lib/bank/match";
import { aCamt053, type EntrySpec } from "@/lib/bank/statement-builders";
import { prisma } from "@/lib/platform/db";
import { type AdyenSdrRecord, adyenSettlementCsv } from "@/lib/providers/adyen/simulate";
import { ReportError } from "@/lib/providers/report";
import { BANK_REFERENCE_MAX_CHARS, type SettlementLine } from "@/lib/providers/types";
import { readReport } from "@/lib/recon/read-report";
import { getPayoutById } from "@/lib/recon/payouts";
import { runReconciliation, type ReconSummary } from "@/lib/recon/run";
import { aTenant, type TestTenant, unique, webhookRequest } from "@/dev/testing/builders";
import { drainAll } from "@/dev/testing/drain";
import { anAdyenBatch, anAdyenItem, anEndpoint, aPspReference, signedByAdyen } from "@/dev/testing/provider-builders";
import { deliver } from "@/dev/testing/route";

const dir = mkdtempSync(path.join(os.tmpdir(), "tally-bank-reference-"));
const MERCHANT = "TallyTestMerchant";
const start = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 3 * 86_400 + 8 * 3600;
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const day = (d: string) => new Date(`${d}T00:00:00Z`);

/** One Settled payment of 100.00 GBP (fees 0.80) and its batch's MerchantPayout of 99.20. */
function aBatch(batch: number, psp: string, modification: string | undefined): AdyenSdrRecord[] {
  return [
    {
      merchant: MERCHANT,
      batch,
      type: "Settled",
      at: start + 60,
      psp,
      modification: aPspReference(),
      paymentMethod: "visa",
      gross: { currency: "GBP", credit: 10_000n },
      net: { currency: "GBP", credit: 9_920n },
      commission: 60n,
      interchange: 20n,
    },
    {
      merchant: MERCHANT,
      batch,
      type: "MerchantPayout",
      at: start + 3600,
      modification,
      net: { currency: "GBP", debit: 9_920n },
    },
  ];
}

/** The payment's webhook, the batch's report through a run, and the worker: the payout posted from the report. */
async function throughARun(tenant: TestTenant, key: string, records: AdyenSdrRecord[]): Promise<ReconSummary> {
  const psp = records[0]!.psp!;
  const item = signedByAdyen(
    anAdyenItem({ currency: "GBP", pspReference: psp, value: 10_000, eventDate: iso(start + 60) }),
    key,
  );
  const res = await deliver(webhookRequest(tenant.slug, "adyen", JSON.stringify(anAdyenBatch([item])), {}));
  expect(res.status).toBe(200);
  await drainAll();
  const file = path.join(dir, `${unique("settlement_detail_report_batch_")}.csv`);
  writeFileSync(file, adyenSettlementCsv(records, "TallyCompany"));
  const r = await runReconciliation({
    tenantId: tenant.id,
    provider: "adyen",
    source: { kind: "csv", file },
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  await drainAll();
  return r.value;
}

async function importStatement(
  tenantId: string,
  entries: EntrySpec[],
  from: string,
  to: string,
): Promise<ImportSummary> {
  const r = await importBankStatement({
    tenantId,
    source: { stream: Readable.from([Buffer.from(aCamt053({ entries, from, to }))]) },
    format: "camt053",
    sourceName: `${unique("statement-")}.xml`,
    actor: SYSTEM_ACTOR,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

const lineOf = (tenantId: string, statementId: bigint, rowNo: number) =>
  prisma.bankLine.findUniqueOrThrow({ where: { tenantId_statementId_rowNo: { tenantId, statementId, rowNo } } });

async function readBatch(records: AdyenSdrRecord[]): Promise<SettlementLine[]> {
  const file = path.join(dir, `${unique("settlement_detail_report_batch_")}.csv`);
  writeFileSync(file, adyenSettlementCsv(records, "TallyCompany"));
  const lines: SettlementLine[] = [];
  for await (const line of readReport(file, undefined, { header: null, format: "" })) lines.push(line);
  return lines;
}

describe("the Settlement Details Report's MerchantPayout", () => {
  const payoutOf = async (modification: string | undefined) =>
    (await readBatch(aBatch(3, aPspReference(), modification))).find((l) => l.kind === "PAYOUT")!;

  it("is read with its Modification Reference, trimmed, as its bank reference; no other record has one", async () => {
    const lines = await readBatch(aBatch(3, aPspReference(), `  TX000000000003XT batch 3, ${MERCHANT}  `));
    expect(lines.map((l) => [l.kind, l.bankReference])).toEqual([
      ["PAYMENT", undefined],
      ["PAYOUT", `TX000000000003XT batch 3, ${MERCHANT}`],
    ]);
    expect((await payoutOf(undefined)).bankReference).toBeUndefined();
    expect((await payoutOf("x".repeat(BANK_REFERENCE_MAX_CHARS))).bankReference).toHaveLength(BANK_REFERENCE_MAX_CHARS);
  });

  it("refuses a Modification Reference over the bound, naming the row and the column", async () => {
    const refused = await payoutOf("x".repeat(BANK_REFERENCE_MAX_CHARS + 1)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ReportError);
    expect(refused).toMatchObject({ row: 3, column: "Modification Reference" });
  });
});

describe("an Adyen payout's bank reference, from the report to the bank", () => {
  const tx = `TX000000000007XT batch 7, ${MERCHANT}`;
  const key7 = `${MERCHANT}:batch:7:GBP`;
  let tenant: TestTenant;
  let summary: ReconSummary;

  beforeAll(async () => {
    tenant = await aTenant();
    const key = await anEndpoint(tenant, "adyen");
    summary = await throughARun(tenant, key, aBatch(7, aPspReference(), tx));
  });

  it("keeps the MerchantPayout's Modification Reference as the payout's bank reference, in the posted movement too", async () => {
    expect(summary).toMatchObject({ matched: 1, postedFromSettlement: 1, payoutResiduals: 0, casesOpened: 0 });
    const payout = await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id, reference: key7 } });
    expect(payout).toMatchObject({
      status: "IN_TRANSIT",
      ourAmount: 9_920n,
      theirAmount: 9_920n,
      bankReference: tx,
    });
    // The raw event the worker posted carries it, so the payout row can be rebuilt from the event alone (replay).
    const claim = await prisma.processedEvent.findFirstOrThrow({
      where: { tenantId: tenant.id, provider: "adyen", providerReference: key7 },
    });
    const raw = await prisma.rawEvent.findUniqueOrThrow({ where: { id: claim.rawEventId } });
    expect(raw.source).toBe("SETTLEMENT");
    expect(JSON.parse(Buffer.from(raw.rawBody!).toString()).movement).toMatchObject({
      kind: "PAYOUT",
      bankReference: tx,
    });
  });

  it("shows it in the payout's read model and returns it from the payouts API", async () => {
    const payout = await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id, reference: key7 } });
    expect((await getPayoutById(tenant.id, payout.id))!.statement.bankReference).toBe(tx);
    const token = await createApiToken({ tenant: tenant.slug, role: "accountant" }, SYSTEM_ACTOR);
    if (!token.ok) throw new Error(token.message);
    const res = await getPayoutRoute(
      new Request(`http://tally.test/api/v1/tenants/${tenant.slug}/payouts/${payout.id}`, {
        headers: { authorization: `Bearer ${token.value.token}` },
      }),
      { params: Promise.resolve({ tenant: tenant.slug, id: String(payout.id) }) },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { statement: { bankReference: string | null } }).statement.bankReference).toBe(tx);
  });

  it("of two credits of its amount on one day, matches the one whose remittance carries that text, by reference", async () => {
    // The report names no arrival day; given one, amount and date alone fit both credits and decide nothing.
    await prisma.payout.updateMany({
      where: { tenantId: tenant.id, reference: key7 },
      data: { arrivalDate: day("2026-12-03") },
    });
    const s = await importStatement(
      tenant.id,
      [
        { amount: 9_920n, currency: "GBP", bookingDate: "2026-12-03", remittance: ["ADYEN N.V. PAYOUT"] },
        { amount: 9_920n, currency: "GBP", bookingDate: "2026-12-03", remittance: [`ADYEN N.V. ${tx.toUpperCase()}`] },
      ],
      "2026-12-01",
      "2026-12-03",
    );
    expect(s).toMatchObject({ matchedPayouts: 1, matchedCredits: 1, ambiguous: 0, withinTolerance: 0 });
    const other = await lineOf(tenant.id, s.statementId, 1);
    const named = await lineOf(tenant.id, s.statementId, 2);
    expect(named).toMatchObject({ matchRule: "reference", matchNote: `names ${key7} (bank reference "${tx}")` });
    expect(other).toMatchObject({ matchedAt: null, matchRule: null });
    const payout = await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id, reference: key7 } });
    expect(payout).toMatchObject({ status: "SETTLED", bankLineId: named.id, settledAt: day("2026-12-03") });
  });
});

describe("what the bank step looks for", () => {
  it("looks for no bank reference shorter than MIN_REFERENCE_CHARS, and for one exactly that long", async () => {
    const tenant = await aTenant();
    const short = "Q9".padEnd(MIN_REFERENCE_CHARS - 1, "9");
    const enough = "Z1".padEnd(MIN_REFERENCE_CHARS, "1");
    const aPayout = (reference: string, bankReference: string, ourAmount: bigint) =>
      prisma.payout.create({
        data: { tenantId: tenant.id, provider: "adyen", reference, currency: "EUR", ourAmount, bankReference },
      });
    const a = await aPayout(`${MERCHANT}:batch:1:EUR`, short, 700n);
    const b = await aPayout(`${MERCHANT}:batch:2:EUR`, enough, 800n);
    const s = await importStatement(
      tenant.id,
      [
        { amount: 700n, bookingDate: "2026-12-03", remittance: [`ADYEN ${short}`] },
        { amount: 800n, bookingDate: "2026-12-03", remittance: [`ADYEN ${enough}`] },
      ],
      "2026-12-01",
      "2026-12-03",
    );
    expect(s.matchedPayouts).toBe(1);
    expect(await prisma.payout.findUniqueOrThrow({ where: { id: a.id } })).toMatchObject({ status: "IN_TRANSIT" });
    expect(await prisma.payout.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({
      status: "SETTLED",
      bankLineId: (await lineOf(tenant.id, s.statementId, 2)).id,
    });
    expect((await lineOf(tenant.id, s.statementId, 1)).matchedAt).toBeNull();
  });
});

describe("a bank reference once known", () => {
  it("is not replaced by null from a settlement that names none, neither by the run nor by the payout posted from it", async () => {
    const tenant = await aTenant();
    const key = await anEndpoint(tenant, "adyen");
    const key9 = `${MERCHANT}:batch:9:GBP`;
    const tx9 = `TX000000000009XT batch 9, ${MERCHANT}`;
    // As a payout webhook carrying the bank's text would leave the row (Adyen sends none today).
    await prisma.payout.create({
      data: { tenantId: tenant.id, provider: "adyen", reference: key9, currency: "GBP", bankReference: tx9 },
    });
    const summary = await throughARun(tenant, key, aBatch(9, aPspReference(), undefined));
    expect(summary).toMatchObject({ postedFromSettlement: 1, payouts: 1, payoutResiduals: 0 });
    const payout = await prisma.payout.findFirstOrThrow({ where: { tenantId: tenant.id, reference: key9 } });
    // Both writers ran (their amount from the run, ours from the posting) and kept the text.
    expect(payout).toMatchObject({ theirAmount: 9_920n, ourAmount: 9_920n, bankReference: tx9 });
    expect(payout.postingId).not.toBeNull();
  });
});
