import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { importBankStatement } from "@/lib/bank/import";
import { namedIn } from "@/lib/bank/match";
import { decideProposal, proposeResolution } from "@/lib/cases/cases";
import { aCamt053, type EntrySpec } from "@/lib/bank/statement-builders";
import type { Provider } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";
import { getRun } from "@/lib/recon/runs";
import { aTenant, unique } from "@/dev/testing/builders";
import { ACCOUNTANT, aPayout, day, importStatement } from "@/dev/testing/bank";

const lineOf = (tenantId: string, row: number, statementId: bigint) =>
  prisma.bankLine.findUniqueOrThrow({ where: { tenantId_statementId_rowNo: { tenantId, statementId, rowNo: row } } });
const payout = (id: bigint) => prisma.payout.findUniqueOrThrow({ where: { id } });
const setRules = (
  tenantId: string,
  provider: Provider,
  data: { matchToleranceMinor?: bigint; matchDateLagDays?: number; matchPriority?: string[] },
) => prisma.providerEndpoint.update({ where: { tenantId_provider: { tenantId, provider } }, data });

describe("matching payouts to bank credits", () => {
  it("settles a payout by the credit whose remittance names it, whatever the day, as a bank run with its counts, audited", async () => {
    const t = await aTenant();
    const p = await aPayout(t.id, { amount: 1_234_567_89n, arrival: "2026-12-02", reference: "po_1QzXdemoRef" });
    const s = await importStatement(
      t.id,
      [
        {
          amount: 1_234_567_89n,
          bookingDate: "2026-12-09",
          remittance: ["STRIPE PAYOUT", "PO_1QZXDEMOREF"],
          acctSvcrRef: "B-1",
        },
        { amount: 250n, direction: "DBIT", bookingDate: "2026-12-03" },
        { amount: 5000n, status: "PDNG", bookingDate: "2026-12-04" },
      ],
      { from: "2026-12-01", to: "2026-12-09" },
    );
    expect(s).toMatchObject({ lines: 2, credits: 1, debits: 1, skippedPending: 1, skipped: { PDNG: 1 } });
    expect(s).toMatchObject({
      matchedPayouts: 1,
      matchedCredits: 1,
      withinTolerance: 0,
      unmatchedPayouts: 0,
      casesOpened: 0,
    });
    const line = await lineOf(t.id, 1, s.statementId);
    expect(line).toMatchObject({ matchRule: "reference", matchNote: null, entryRef: "B-1" });
    expect(line.matchedAt).not.toBeNull();
    expect(await payout(p.id)).toMatchObject({ status: "SETTLED", bankLineId: line.id, settledAt: day("2026-12-09") });
    const [run] = s.runs;
    expect(s.runs).toHaveLength(1);
    expect(await prisma.reconRun.findUniqueOrThrow({ where: { id: run!.runId } })).toMatchObject({
      provider: "stripe",
      source: "BANK",
      status: "DONE",
      compared: 1,
      payouts: 1,
      matched: 1,
      withinTolerance: 0,
      oursNotTheirs: 0,
      theirsNotOurs: 0,
      actorLabel: ACCOUNTANT.label,
      windowFrom: day("2026-12-01"),
      windowTo: day("2026-12-10"),
      rules: { toleranceMinor: "0", dateLagDays: 3, priority: ["reference", "amount_date"] },
    });
    const audit = await prisma.auditLog.findFirstOrThrow({ where: { tenantId: t.id, action: "bank.import" } });
    expect(audit).toMatchObject({
      actorLabel: ACCOUNTANT.label,
      subjectType: "bank_statement",
      subjectId: String(s.statementId),
    });
    expect(audit.details).toMatchObject({
      lines: 2,
      matchedPayouts: 1,
      matches: [{ rule: "reference", payouts: [`stripe:${p.reference}`] }],
    });
  });

  it("settles by amount and date only within [arrival, arrival + lag], and only a payout's own currency", async () => {
    const t = await aTenant();
    const inWindow = await aPayout(t.id, { amount: 25_000n, arrival: "2026-12-02" });
    const late = await aPayout(t.id, { amount: 30_000n, arrival: "2026-12-02" });
    const early = await aPayout(t.id, { amount: 40_000n, arrival: "2026-12-05" });
    const dollars = await aPayout(t.id, { amount: 50_000n, arrival: "2026-12-02", currency: "USD" });
    const s = await importStatement(
      t.id,
      [
        { amount: 25_000n, bookingDate: "2026-12-05" },
        { amount: 30_000n, bookingDate: "2026-12-06" },
        { amount: 40_000n, bookingDate: "2026-12-04" },
        { amount: 50_000n, bookingDate: "2026-12-03" },
      ],
      { from: "2026-12-01", to: "2026-12-04" },
    );
    expect(s.matchedPayouts).toBe(1);
    expect(await payout(inWindow.id)).toMatchObject({ status: "SETTLED" });
    expect((await lineOf(t.id, 1, s.statementId)).matchRule).toBe("amount_date");
    for (const p of [late, early, dollars]) expect((await payout(p.id)).status).toBe("IN_TRANSIT");
  });

  it("settles N payouts with one credit: one that names them all, and one equal to the sum of a provider's payouts of a day", async () => {
    const t = await aTenant();
    const a = await aPayout(t.id, { amount: 1_000n, arrival: "2026-12-02", reference: "po_sumA1" });
    const b = await aPayout(t.id, { amount: 2_500n, arrival: "2026-12-03", reference: "po_sumB2" });
    const day3 = await Promise.all(
      [4_000n, 5_000n, 6_000n].map((amount) => aPayout(t.id, { amount, arrival: "2026-12-03", provider: "adyen" })),
    );
    const s = await importStatement(
      t.id,
      [
        { amount: 3_500n, bookingDate: "2026-12-04", remittance: ["STRIPE po_suma1 po_sumb2"] },
        { amount: 15_000n, bookingDate: "2026-12-04", remittance: ["ADYEN N.V. SETTLEMENT"] },
      ],
      { from: "2026-12-01", to: "2026-12-04" },
    );
    expect(s).toMatchObject({ matchedPayouts: 5, matchedCredits: 2 });
    const named = await lineOf(t.id, 1, s.statementId);
    const summed = await lineOf(t.id, 2, s.statementId);
    expect(named).toMatchObject({ matchRule: "reference_sum", matchNote: "sum of po_sumA1, po_sumB2" });
    expect(summed).toMatchObject({ matchRule: "amount_date_sum" });
    for (const p of [a, b]) expect((await payout(p.id)).bankLineId).toBe(named.id);
    for (const p of day3) expect((await payout(p.id)).bankLineId).toBe(summed.id);
    expect(s.runs.map((r) => r.provider).sort()).toEqual(["adyen", "stripe"]);
  });

  it("does not count a reference found only inside a longer one: po_7 is not named by po_707", async () => {
    const t = await aTenant();
    const short = await aPayout(t.id, { amount: 700n, arrival: "2026-12-02", reference: "po_prefix7" });
    const long = await aPayout(t.id, { amount: 70_700n, arrival: "2026-12-02", reference: "po_prefix707" });
    const s = await importStatement(
      t.id,
      [{ amount: 70_700n, bookingDate: "2026-12-20", remittance: ["STRIPE po_prefix707"] }],
      { from: "2026-12-01", to: "2026-12-03" },
    );
    expect(s.matchedPayouts).toBe(1);
    expect((await lineOf(t.id, 1, s.statementId)).matchRule).toBe("reference");
    expect((await payout(long.id)).status).toBe("SETTLED");
    expect((await payout(short.id)).status).toBe("IN_TRANSIT");
    expect(namedIn("po_7 and po_707", ["po_7", "po_707"]).sort()).toEqual(["po_7", "po_707"]);
    expect(namedIn("po_707", ["po_7", "po_707"])).toEqual(["po_707"]);
  });

  it("leaves an ambiguous fit unmatched and says so on the credit", async () => {
    const t = await aTenant();
    // One after the other: the note names them in the order they were recorded.
    const twins = [
      await aPayout(t.id, { amount: 7_777n, arrival: "2026-12-02" }),
      await aPayout(t.id, { amount: 7_777n, arrival: "2026-12-02" }),
    ];
    const alone = await aPayout(t.id, { amount: 8_888n, arrival: "2026-12-02" });
    const s = await importStatement(
      t.id,
      [
        { amount: 7_777n, bookingDate: "2026-12-03" },
        { amount: 8_888n, bookingDate: "2026-12-03" },
        { amount: 8_888n, bookingDate: "2026-12-04" },
      ],
      { from: "2026-12-01", to: "2026-12-04" },
    );
    expect(s).toMatchObject({ matchedPayouts: 0, ambiguous: 3 });
    for (const p of [...twins, alone]) expect((await payout(p.id)).status).toBe("IN_TRANSIT");
    expect((await lineOf(t.id, 1, s.statementId)).matchNote).toBe(
      `fits 2 payouts by amount and date (${twins.map((p) => p.reference).join(", ")}): left for a person`,
    );
    expect((await lineOf(t.id, 2, s.statementId)).matchNote).toBe(
      `one of 2 credits that fit ${alone.reference} by amount and date: left for a person`,
    );
    expect((await lineOf(t.id, 2, s.statementId)).matchedAt).toBeNull();
  });

  it("records a match within the endpoint's tolerance as within_tolerance, with the rule and the difference, and counts it on the run", async () => {
    const t = await aTenant();
    await setRules(t.id, "stripe", { matchToleranceMinor: 5n });
    const near = await aPayout(t.id, { amount: 10_000n, arrival: "2026-12-02" });
    const named = await aPayout(t.id, {
      amount: 20_000n,
      arrival: "2026-12-02",
      reference: "po_tolerant1",
      theirs: 20_004n,
    });
    const far = await aPayout(t.id, { amount: 30_000n, arrival: "2026-12-02" });
    const farNamed = await aPayout(t.id, { amount: 40_000n, arrival: "2026-12-02", reference: "po_tolerantFar" });
    const s = await importStatement(
      t.id,
      [
        { amount: 9_997n, bookingDate: "2026-12-03" },
        { amount: 20_000n, bookingDate: "2026-12-03", remittance: ["po_tolerant1"] },
        { amount: 29_994n, bookingDate: "2026-12-03" },
        { amount: 39_990n, bookingDate: "2026-12-03", remittance: ["STRIPE po_tolerantFar"] },
      ],
      { from: "2026-12-01", to: "2026-12-03" },
    );
    expect(s).toMatchObject({ matchedPayouts: 2, withinTolerance: 2 });
    expect(await lineOf(t.id, 1, s.statementId)).toMatchObject({
      matchRule: "within_tolerance",
      matchNote: "amount_date: the credit is 3 minor units less than EUR 10000 (tolerance 5)",
    });
    // The provider's own amount (their_amount) is what the bank should show.
    expect(await lineOf(t.id, 2, s.statementId)).toMatchObject({
      matchRule: "within_tolerance",
      matchNote: "reference: the credit is 4 minor units less than EUR 20004 (tolerance 5)",
    });
    expect((await payout(near.id)).status).toBe("SETTLED");
    expect((await payout(named.id)).status).toBe("SETTLED");
    expect((await payout(far.id)).status).toBe("IN_TRANSIT");
    expect((await payout(farNamed.id)).status).toBe("IN_TRANSIT");
    expect((await lineOf(t.id, 4, s.statementId)).matchNote).toBe(
      "names po_tolerantFar, but the credit is 10 minor units less than EUR 40000 (tolerance 5): beyond the tolerance, not matched",
    );
    expect(await prisma.reconRun.findUniqueOrThrow({ where: { id: s.runs[0]!.runId } })).toMatchObject({
      matched: 2,
      withinTolerance: 2,
      rules: { toleranceMinor: "5" },
    });
  });

  it("tries the endpoint's rules in its priority order", async () => {
    const entries = (ref: string): EntrySpec[] => [
      { amount: 6_000n, bookingDate: "2026-12-20", remittance: [`payout ${ref}`] },
      { amount: 6_000n, bookingDate: "2026-12-03" },
    ];
    const outcomes: number[] = [];
    for (const priority of [
      ["reference", "amount_date"],
      ["amount_date", "reference"],
    ]) {
      const t = await aTenant();
      await setRules(t.id, "stripe", { matchPriority: priority });
      const p = await aPayout(t.id, { amount: 6_000n, arrival: "2026-12-02", reference: unique("po_prio") });
      const s = await importStatement(t.id, entries(p.reference), { from: "2026-12-01", to: "2026-12-20" });
      const settled = await payout(p.id);
      outcomes.push((await prisma.bankLine.findUniqueOrThrow({ where: { id: settled.bankLineId! } })).rowNo);
      expect(s.matchedPayouts).toBe(1);
    }
    expect(outcomes).toEqual([1, 2]);
  });
});

describe("what the bank never credited, after its window", () => {
  it("opens exactly one case for a payout once the statements cover its window, and closes it when a later statement brings the credit", async () => {
    const t = await aTenant();
    const p = await aPayout(t.id, { amount: 12_300n, arrival: "2026-12-02", reference: "po_lateArrival" });
    // Covers up to 12-04: the credit may still come on 12-05 (arrival + 3 days).
    const first = await importStatement(t.id, [{ amount: 1n, bookingDate: "2026-12-02" }], {
      from: "2026-12-01",
      to: "2026-12-04",
    });
    expect(first).toMatchObject({ unmatchedPayouts: 0, casesOpened: 0 });
    const second = await importStatement(t.id, [{ amount: 2n, bookingDate: "2026-12-05" }], {
      from: "2026-12-05",
      to: "2026-12-05",
    });
    expect(second).toMatchObject({ unmatchedPayouts: 1, casesOpened: 1 });
    const third = await importStatement(t.id, [{ amount: 3n, bookingDate: "2026-12-06" }], {
      from: "2026-12-06",
      to: "2026-12-06",
    });
    expect(third).toMatchObject({ unmatchedPayouts: 1, casesOpened: 0 });
    const discrepancies = await prisma.reconDiscrepancy.findMany({
      where: { tenantId: t.id },
      include: { case: true },
    });
    expect(discrepancies).toHaveLength(1);
    const [d] = discrepancies;
    expect(d).toMatchObject({
      provider: "stripe",
      reference: "po_lateArrival",
      bucket: "BANK_UNMATCHED",
      cause: "BANK",
      state: "OPEN",
      day: day("2026-12-02"),
      ourAmount: 12_300n,
      ourCurrency: "EUR",
      firstRunId: second.runs[0]!.runId,
      lastRunId: third.runs[0]!.runId,
    });
    expect(d!.case).toMatchObject({ kind: "BANK_UNMATCHED", status: "OPEN" });
    expect(await prisma.reconRun.findUniqueOrThrow({ where: { id: third.runs[0]!.runId } })).toMatchObject({
      oursNotTheirs: 1,
    });
    // The run's page lists what it found under "not at the bank".
    const run = await getRun(t.id, third.runs[0]!.runId);
    expect(run?.buckets.map((b) => [b.bucket, b.count, b.items.map((i) => i.reference)])).toEqual([
      ["BANK_UNMATCHED", 1, ["po_lateArrival"]],
    ]);

    const fourth = await importStatement(
      t.id,
      [{ amount: 12_300n, bookingDate: "2026-12-07", remittance: ["STRIPE po_lateArrival"] }],
      { from: "2026-12-07", to: "2026-12-07" },
    );
    expect(fourth).toMatchObject({ matchedPayouts: 1, casesClosed: 1, unmatchedPayouts: 0 });
    const after = await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: d!.id }, include: { case: true } });
    expect(after.state).toBe("RESOLVED");
    expect(after.note).toMatch(
      /^matched to bank line #\d+ \(reference, payout po_lateArrival\) by bank import run \d+$/,
    );
    expect(after.case).toMatchObject({
      status: "RESOLVED",
      resolution: `matched at the bank by bank import run ${fourth.runs[0]!.runId}`,
    });
    const closed = await prisma.auditLog.findFirstOrThrow({
      where: { tenantId: t.id, action: "case.close", subjectId: String(after.case!.id) },
    });
    expect(closed.reason).toMatch(/the bank credited it/);
    expect((await payout(p.id)).status).toBe("SETTLED");
  });

  it("re-checks a case parked as timing: still unmatched on a later import, it is open again, audited", async () => {
    const t = await aTenant();
    await aPayout(t.id, { amount: 4_400n, arrival: "2026-12-01", reference: "po_timing01" });
    await importStatement(t.id, [{ amount: 1n, bookingDate: "2026-12-04" }], { from: "2026-12-01", to: "2026-12-04" });
    const c = await prisma.case.findFirstOrThrow({ where: { tenantId: t.id } });
    // Two accountants park it as a timing difference (four eyes): WAITING until an import re-checks it.
    const [alice, bruno] = await Promise.all(
      ["alice", "bruno"].map(async (n) => {
        const u = await prisma.user.create({ data: { email: `${unique(n)}@bank.test`, role: "accountant" } });
        return { userId: u.id, label: u.email };
      }),
    );
    const proposed = await proposeResolution(t.id, c.id, alice!, {
      resolution: "TIMING",
      reason: "the bank books it late",
    });
    if (!proposed.ok) throw new Error(proposed.message);
    const decided = await decideProposal(t.id, c.id, proposed.value.proposalId, bruno!, { decision: "approve" });
    if (!decided.ok) throw new Error(decided.message);
    expect((await prisma.case.findUniqueOrThrow({ where: { id: c.id } })).status).toBe("WAITING");
    const next = await importStatement(t.id, [{ amount: 2n, bookingDate: "2026-12-05" }], {
      from: "2026-12-05",
      to: "2026-12-05",
    });
    expect(next).toMatchObject({ casesReopened: 1, casesOpened: 0 });
    expect(await prisma.case.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
      status: "OPEN",
      waitingSince: null,
    });
    const reopened = await prisma.auditLog.findFirstOrThrow({ where: { tenantId: t.id, action: "case.reopen" } });
    expect(reopened).toMatchObject({ subjectId: String(c.id), actorType: "SYSTEM" });
  });

  it("opens a case for a credit naming a provider that no payout explains after its window, and closes it once one does", async () => {
    const t = await aTenant();
    const entries: EntrySpec[] = [
      {
        amount: 98_765n,
        bookingDate: "2026-12-02",
        remittance: ["SETTLEMENT 4411"],
        counterparty: "Adyen N.V.",
        acctSvcrRef: "ADY-4411",
      },
      { amount: 55_500n, bookingDate: "2026-12-02", remittance: ["Invoice 17"], counterparty: "ACME Ltd" },
    ];
    const early = await importStatement(t.id, entries, { from: "2026-12-01", to: "2026-12-04" });
    expect(early).toMatchObject({ unmatchedCredits: 0, casesOpened: 0 });
    const covered = await importStatement(t.id, [], { from: "2026-12-05", to: "2026-12-05" });
    expect(covered).toMatchObject({ unmatchedCredits: 1, casesOpened: 1 });
    const d = await prisma.reconDiscrepancy.findFirstOrThrow({ where: { tenantId: t.id }, include: { case: true } });
    expect(d).toMatchObject({
      provider: "adyen",
      reference: "ADY-4411",
      bucket: "BANK_UNMATCHED",
      cause: "BANK",
      theirAmount: 98_765n,
    });
    expect(d.theirLine).toMatchObject({
      row: 1,
      counterparty: "Adyen N.V.",
      remittance: "SETTLEMENT 4411",
      amount: "98765",
      format: "camt053",
      header: null,
      line: "2026-12-02 · 987.65 EUR · Adyen N.V. · SETTLEMENT 4411 · ref ADY-4411 · account DE89370400440532013000",
    });
    expect(d.case?.status).toBe("OPEN");
    expect(await prisma.reconRun.findUniqueOrThrow({ where: { id: covered.runs[0]!.runId } })).toMatchObject({
      provider: "adyen",
      theirsNotOurs: 1,
    });

    // The payout's row arrives late (its webhook, or a settlement run); the next import matches the credit.
    await aPayout(t.id, { amount: 98_765n, arrival: "2026-12-01", provider: "adyen" });
    const later = await importStatement(t.id, [], { from: "2026-12-06", to: "2026-12-06" });
    expect(later).toMatchObject({ matchedPayouts: 1, casesClosed: 1, unmatchedCredits: 0 });
    expect(
      await prisma.reconDiscrepancy.findUniqueOrThrow({ where: { id: d.id }, include: { case: true } }),
    ).toMatchObject({
      state: "RESOLVED",
      case: { status: "RESOLVED" },
    });
    expect(await prisma.reconDiscrepancy.count({ where: { tenantId: t.id } })).toBe(1);
  });
});

describe("importing a statement", () => {
  it("refuses the same file twice, by its SHA-256, from disk or as a stream, adding nothing", async () => {
    const t = await aTenant();
    const xml = aCamt053({ entries: [{ amount: 100n }], from: "2026-12-01", to: "2026-12-02" });
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const file = `${mkdtempSync("/tmp/tally-bank-")}/statement.xml`;
    writeFileSync(file, xml);
    const input = { tenantId: t.id, format: "camt053" as const, sourceName: "statement.xml", actor: ACCOUNTANT };
    const first = await importBankStatement({ ...input, source: { file } });
    expect(first.ok).toBe(true);
    const again = await importBankStatement({ ...input, source: { file } });
    expect(again).toMatchObject({ ok: false, reason: "already_imported" });
    if (!again.ok)
      expect(again.message).toMatch(
        /^This file was imported already: statement #\d+ \(statement.xml\), on .* by accountant@bank.test/,
      );
    const streamed = await importBankStatement({ ...input, source: { stream: Readable.from([Buffer.from(xml)]) } });
    expect(streamed).toMatchObject({ ok: false, reason: "already_imported" });
    expect(await prisma.bankStatement.count({ where: { tenantId: t.id } })).toBe(1);
    expect(await prisma.bankLine.count({ where: { tenantId: t.id } })).toBe(1);
  });

  it("refuses a file whose third entry is bad whole: no statement, no lines, no match", async () => {
    const t = await aTenant();
    const p = await aPayout(t.id, { amount: 100n, arrival: "2026-12-01", reference: "po_keepMe01" });
    const xml = aCamt053({
      entries: [{ amount: 100n, remittance: ["po_keepMe01"] }, { amount: 200n }, { amount: "3.001" }],
    });
    const r = await importBankStatement({
      tenantId: t.id,
      source: { stream: Readable.from([Buffer.from(xml)]) },
      format: "camt053",
      sourceName: "bad.xml",
      actor: ACCOUNTANT,
    });
    expect(r).toMatchObject({ ok: false, reason: "malformed_statement" });
    if (!r.ok)
      expect(r.message).toMatch(
        /^Statement refused, nothing imported: line \d+ \(<Amt> of entry 3\): 3.001 EUR has more than 2/,
      );
    expect(await prisma.bankStatement.count({ where: { tenantId: t.id } })).toBe(0);
    expect(await prisma.bankLine.count({ where: { tenantId: t.id } })).toBe(0);
    expect((await payout(p.id)).status).toBe("IN_TRANSIT");
  });

  it("imports a CSV statement in its layout and matches it like any other; a layout that cannot work is refused", async () => {
    const t = await aTenant();
    const p = await aPayout(t.id, { amount: 123_456n, arrival: "2026-12-02", reference: "po_csvRef001" });
    const csv =
      "Buchungstag;Betrag;Verwendungszweck\n03.12.2026;1.234,56;STRIPE po_csvRef001\n04.12.2026;-10,00;Gebühr\n";
    const layout = {
      account: "Hausbank",
      delimiter: ";",
      dateColumn: "Buchungstag",
      dateFormat: "DD.MM.YYYY",
      amountColumn: "Betrag",
      decimalSeparator: ",",
      thousandsSeparator: ".",
      currency: "EUR",
      remittanceColumns: ["Verwendungszweck"],
    };
    const input = { tenantId: t.id, format: "csv" as const, sourceName: "konto.csv", actor: ACCOUNTANT };
    const r = await importBankStatement({ ...input, layout, source: { stream: Readable.from([Buffer.from(csv)]) } });
    expect(r).toMatchObject({
      ok: true,
      value: { lines: 2, credits: 1, debits: 1, matchedPayouts: 1, from: "2026-12-03", to: "2026-12-04" },
    });
    expect(await payout(p.id)).toMatchObject({ status: "SETTLED" });
    expect(await prisma.bankStatement.findFirstOrThrow({ where: { tenantId: t.id } })).toMatchObject({
      format: "csv",
      account: "Hausbank",
      currency: "EUR",
    });
    const noLayout = await importBankStatement({ ...input, source: { stream: Readable.from([Buffer.from(csv)]) } });
    expect(noLayout).toMatchObject({ ok: false, reason: "invalid_layout" });
    const bad = await importBankStatement({
      ...input,
      layout: { ...layout, dateFormat: "D.M.YY" },
      source: { stream: Readable.from([Buffer.from(csv)]) },
    });
    expect(bad).toMatchObject({ ok: false, reason: "invalid_layout" });
    if (!bad.ok) expect(bad.message).toMatch(/dateFormat/);
  });
});

describe("two imports at once", () => {
  it("never lets two credits claim one payout: six statements naming it, imported concurrently, settle it once", async () => {
    const t = await aTenant();
    const p = await aPayout(t.id, { amount: 5_000n, arrival: "2026-12-02", reference: "po_contested1" });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        importStatement(
          t.id,
          [
            ...Array.from({ length: 200 }, (_, j) => ({ amount: BigInt(1 + j), direction: "DBIT" as const })),
            { amount: 5_000n, bookingDate: "2026-12-03", remittance: [`STRIPE po_contested1 #${i}`] },
          ],
          { from: "2026-12-01", to: `2026-12-0${2 + (i % 2)}` },
        ),
      ),
    );
    expect(results.reduce((s, r) => s + r.matchedPayouts, 0)).toBe(1);
    const matched = await prisma.bankLine.findMany({ where: { tenantId: t.id, matchedAt: { not: null } } });
    expect(matched).toHaveLength(1);
    expect((await payout(p.id)).bankLineId).toBe(matched[0]!.id);
  });

  it("imports one file once when it is sent twice at the same moment", async () => {
    const t = await aTenant();
    const xml = Buffer.from(aCamt053({ entries: [{ amount: 700n }], from: "2026-12-01", to: "2026-12-01" }));
    const results = await Promise.all(
      [1, 2].map(() =>
        importBankStatement({
          tenantId: t.id,
          source: { stream: Readable.from([xml]) },
          format: "camt053",
          sourceName: "twice.xml",
          actor: SYSTEM_ACTOR,
        }),
      ),
    );
    expect(results.map((r) => (r.ok ? "imported" : r.reason)).sort()).toEqual(["already_imported", "imported"]);
    expect(await prisma.bankLine.count({ where: { tenantId: t.id } })).toBe(1);
  });
});
