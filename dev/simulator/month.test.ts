// The generated month agrees with itself, read back the way the product will read
// it: the report from its CSV text (and through Tally's own Stripe report parser),
// the bank statement through an XML parser, the webhooks from their bodies. Nothing
// here reads the generator's internals, so a generator that lies in one output and
// not the others fails. Pure: no database.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { CAMT053_NAMESPACE } from "@/dev/simulator/camt053-writer";
import { generateMonth, type Month, monthJson, SETTLEMENT_HEADER } from "@/dev/simulator/month";
import { toMinorUnits } from "@/lib/ledger/money";
import type { SettlementLine } from "@/lib/providers/types";
import { readReport, type ReportMeta } from "@/lib/recon/read-report";

const minor = (text: string): bigint => {
  const r = toMinorUnits(text, "USD");
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
/** Stripe's US card price, written out here rather than taken from the generator. */
const cardFee = (gross: bigint) => (gross * 29n + 500n) / 1000n + 30n;
const addDays = (date: string, n: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

type Row = Record<(typeof SETTLEMENT_HEADER)[number], string>;
type Event = { id: string; type: string; created: number; data: { object: Record<string, unknown> } };
type Entry = { amount: bigint; direction: string; booked: string; ref: string; ustrd: string; party: string };

/** The month as the product will see it. */
function read(month: Month) {
  const rows = parse(month.settlementCsv, { columns: true }) as Row[];
  const events = month.deliveries.map((d) => ({ d, e: JSON.parse(d.body) as Event }));
  const firsts = events.filter(({ d }) => d.note !== "retry");
  const byType = (type: string) => firsts.filter(({ e }) => e.type === type).map(({ e }) => e.data.object);
  const paidOut = new Map(byType("payout.paid").map((p) => [p.id as string, BigInt(p.amount as number)]));
  const xml = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@",
    // Amounts stay text: a float would lose cents.
    parseTagValue: false,
    isArray: (name) => ["Ntry", "Bal", "Ustrd"].includes(name),
  }).parse(month.camt053);
  const stmt = xml.Document.BkToCstmrStmt.Stmt;
  const entries: Entry[] = stmt.Ntry.map(
    (n: {
      Amt: { "#text": string; "@Ccy": string };
      CdtDbtInd: string;
      BookgDt: { Dt: string };
      AcctSvcrRef: string;
      NtryDtls: { TxDtls: { RltdPties: Record<string, { Nm: string }>; RmtInf: { Ustrd: string[] } } };
    }) => ({
      amount: minor(n.Amt["#text"]),
      direction: n.CdtDbtInd,
      booked: n.BookgDt.Dt,
      ref: n.AcctSvcrRef,
      ustrd: n.NtryDtls.TxDtls.RmtInf.Ustrd.join(" "),
      party: Object.values(n.NtryDtls.TxDtls.RltdPties)[0]!.Nm,
    }),
  );
  /** Per automatic_payout_id: the sum of its lines' net as the report states it. */
  const linesNet = new Map<string, bigint>();
  for (const row of rows)
    if (row.reporting_category !== "payout" && row.automatic_payout_id)
      linesNet.set(row.automatic_payout_id, (linesNet.get(row.automatic_payout_id) ?? 0n) + minor(row.net));
  const payoutRows = new Map(rows.filter((r) => r.reporting_category === "payout").map((r) => [r.source_id, r]));
  return { rows, events, firsts, byType, paidOut, xml, stmt, entries, linesNet, payoutRows };
}

const month = generateMonth({ seed: 20261101 });
const seen = read(month);
const expectation = <K extends string>(defect: K) => {
  const e = month.truth.expected.find((x) => x.defect === defect);
  if (!e) throw new Error(`no expectation for ${defect}`);
  return e as Extract<Month["truth"]["expected"][number], { defect: K }>;
};

describe("a generated Stripe month", () => {
  it("is the same month, byte for byte, for the same seed, and another month for another seed", () => {
    expect(monthJson(generateMonth({ seed: 20261101 }))).toBe(monthJson(month));
    const other = generateMonth({ seed: 20261102 });
    expect(other.settlementCsv).not.toBe(month.settlementCsv);
    expect(other.camt053).not.toBe(month.camt053);
  });

  it("pays out every day after the first, each payout stated alike by payout.paid, its report line and the truth", () => {
    // A day nets below zero only after a large dispute; the default month has none of those.
    expect(month.truth.payouts).toHaveLength(month.days - 1);
    expect([...seen.paidOut.keys()].sort()).toEqual([...seen.payoutRows.keys()].sort());
    for (const p of month.truth.payouts) {
      const row = seen.payoutRows.get(p.reference)!;
      expect(row.automatic_payout_id).toBe(p.reference);
      expect(minor(row.gross)).toBe(-p.amount);
      expect(minor(row.net)).toBe(-p.amount);
      expect(seen.paidOut.get(p.reference)).toBe(p.amount);
      expect(p.linesNet).toBe(seen.linesNet.get(p.reference));
      expect(p.arrivalDate).toBe(addDays(p.createdDay, 1));
      const event = seen.byType("payout.paid").find((o) => o.id === p.reference)!;
      expect(event).toMatchObject({
        object: "payout",
        currency: "usd",
        arrival_date: Date.parse(`${p.arrivalDate}T00:00:00Z`) / 1000,
        destination: month.destination,
        status: "paid",
        automatic: true,
        method: "standard",
        type: "bank_account",
      });
    }
  });

  it("makes every payout without a residual defect exactly the sum of its lines' net", () => {
    const balanced = month.truth.payouts.filter((p) => p.defect !== "missing_fee" && p.defect !== "short_payout");
    expect(balanced.length).toBe(month.truth.payouts.length - 2);
    for (const p of balanced) expect(seen.paidOut.get(p.reference), p.reference).toBe(seen.linesNet.get(p.reference));
  });

  it("pays out on day D the lines created on day D−1, and leaves the last day's lines unpaid", () => {
    const created = new Map(month.truth.payouts.map((p) => [p.reference, p.createdDay]));
    const lastDay = addDays(month.start, month.days - 1);
    for (const row of seen.rows) {
      if (row.reporting_category === "payout") continue;
      const day = row.created_utc.slice(0, 10);
      if (day === lastDay) expect(row.automatic_payout_id, row.balance_transaction_id).toBe("");
      else expect(created.get(row.automatic_payout_id), row.balance_transaction_id).toBe(addDays(day, 1));
    }
  });

  it("reports every line with net = gross − fee and Stripe's fees, except the one charge whose fee it leaves out", () => {
    const missing = expectation("missing_fee");
    for (const row of seen.rows) {
      const [gross, fee, net] = [minor(row.gross), minor(row.fee), minor(row.net)];
      expect(net, row.balance_transaction_id).toBe(gross - fee);
      const category = row.reporting_category;
      if (category === "charge" && row.payment_intent_id === missing.line) expect(fee).toBe(0n);
      else if (category === "charge") expect(fee, row.balance_transaction_id).toBe(cardFee(gross));
      else if (category === "dispute") expect(fee).toBe(1500n);
      else expect(fee, row.balance_transaction_id).toBe(0n);
    }
    const zeroFee = seen.rows.filter((r) => r.reporting_category === "charge" && r.fee === "0.00");
    expect(zeroFee.map((r) => r.payment_intent_id)).toEqual([missing.line]);
    const gross = minor(zeroFee[0]!.gross);
    expect(missing.fee).toBe(cardFee(gross));
    // The payout was still computed net of the real fee: it falls short of its lines by exactly that fee.
    expect(zeroFee[0]!.automatic_payout_id).toBe(missing.reference);
    const residual = seen.paidOut.get(missing.reference)! - seen.linesNet.get(missing.reference)!;
    expect(residual).toBe(-cardFee(gross));
    expect(missing.residual).toBe(residual);
  });

  it("pays the short payout 1.00 less than its lines' net in the webhook, the report and the bank alike", () => {
    const short = expectation("short_payout");
    const lines = seen.linesNet.get(short.reference)!;
    expect(seen.paidOut.get(short.reference)! - lines).toBe(-100n);
    expect(-minor(seen.payoutRows.get(short.reference)!.net) - lines).toBe(-100n);
    const credit = seen.entries.find((e) => e.ustrd.includes(short.reference))!;
    expect(credit.amount - lines).toBe(-100n);
    expect(short.residual).toBe(-100n);
  });

  it("credits every payout but the missing one within 2 days of its arrival; the combined credit is the two payouts' sum", () => {
    const missing = expectation("missing_credit");
    const credits = seen.entries.filter((e) => e.direction === "CRDT");
    const amounts = month.truth.payouts.map((p) => p.amount);
    const kinds = { reference: 0, none: 0, combined: 0 };
    for (const p of month.truth.payouts) {
      const naming = credits.filter((e) => e.ustrd.includes(p.reference));
      if (p.reference === missing.reference) {
        expect(naming).toEqual([]);
        expect(credits.filter((e) => e.amount === p.amount)).toEqual([]);
        expect(p.bankBookingDate).toBeNull();
        continue;
      }
      let credit: Entry;
      if (p.remittance === "combined") {
        const other = month.truth.payouts.find((x) => x.reference === p.combinedWith)!;
        expect(naming).toHaveLength(1);
        credit = naming[0]!;
        expect(credit.ustrd).toContain(other.reference);
        expect(credit.amount).toBe(p.amount + other.amount);
        expect(Math.abs(Date.parse(p.createdDay) - Date.parse(other.createdDay))).toBe(86_400_000);
      } else if (p.remittance === "none") {
        // Only amount and date can find it: exactly one credit fits, and no other payout has its amount.
        const fits = credits.filter(
          (e) => e.amount === p.amount && e.booked >= p.arrivalDate && e.booked <= addDays(p.arrivalDate, 2),
        );
        expect(fits).toHaveLength(1);
        credit = fits[0]!;
        expect(credit.ustrd).toBe("STRIPE TRANSFER");
        expect(amounts.filter((a) => a === p.amount)).toHaveLength(1);
      } else {
        expect(naming).toHaveLength(1);
        credit = naming[0]!;
        expect(credit.amount).toBe(p.amount);
        expect(credit.ustrd).toBe(`STRIPE PAYOUT ${p.reference}`);
      }
      kinds[p.remittance!]++;
      expect(credit.booked >= p.arrivalDate && credit.booked <= addDays(p.arrivalDate, 2), p.reference).toBe(true);
      expect(credit.booked).toBe(p.bankBookingDate);
      expect(credit.ref).toBe(p.bankEntryRef);
      expect(credit.party).toMatch(/STRIPE/);
    }
    expect(kinds).toEqual({ reference: month.truth.payouts.length - 1 - 3 - 2, none: 3, combined: 2 });
    // Every credit from Stripe is a payout's; the others are other payers', at amounts no payout has.
    const stripeCredits = credits.filter((e) => e.party.includes("STRIPE"));
    expect(stripeCredits).toHaveLength(month.truth.payouts.length - 1 - 1);
    for (const e of credits.filter((x) => !x.party.includes("STRIPE"))) {
      expect(e.ustrd).toMatch(/^INVOICE \d{4} /);
      expect(amounts).not.toContain(e.amount);
    }
    expect(seen.entries.some((e) => e.direction === "DBIT" && e.ustrd.startsWith("RENT"))).toBe(true);
    expect(seen.entries.some((e) => e.direction === "DBIT" && e.ustrd.startsWith("SALARY"))).toBe(true);
    expect(seen.entries.some((e) => e.direction === "DBIT" && e.ustrd.startsWith("CARD FEES"))).toBe(true);
  });

  it("writes a well-formed camt.053.001.02 whose closing balance is the opening plus credits minus debits", () => {
    expect(XMLValidator.validate(month.camt053)).toBe(true);
    expect(seen.xml.Document["@xmlns"]).toBe(CAMT053_NAMESPACE);
    const { stmt, entries } = seen;
    expect(stmt.Acct.Id.IBAN).toBe(month.iban);
    expect(stmt.Acct.Ccy).toBe("USD");
    expect(stmt.FrToDt.FrDtTm).toBe(`${month.start}T00:00:00`);
    expect(stmt.FrToDt.ToDtTm).toBe(`${addDays(month.start, month.days + 2)}T23:59:59`);
    const balance = (code: string) => {
      const b = stmt.Bal.find((x: { Tp: { CdOrPrtry: { Cd: string } } }) => x.Tp.CdOrPrtry.Cd === code);
      expect(b.Amt["@Ccy"]).toBe("USD");
      return b.CdtDbtInd === "DBIT" ? -minor(b.Amt["#text"]) : minor(b.Amt["#text"]);
    };
    const credits = entries.filter((e) => e.direction === "CRDT").reduce((s, e) => s + e.amount, 0n);
    const debits = entries.filter((e) => e.direction === "DBIT").reduce((s, e) => s + e.amount, 0n);
    expect(debits).toBeGreaterThan(0n);
    expect(balance("CLBD")).toBe(balance("OPBD") + credits - debits);
    expect(month.truth.bank).toMatchObject({
      opening: balance("OPBD"),
      closing: balance("CLBD"),
      entries: entries.length,
    });
    expect(minor(stmt.TxsSummry.TtlCdtNtries.Sum)).toBe(credits);
    expect(minor(stmt.TxsSummry.TtlDbtNtries.Sum)).toBe(debits);
    expect(Number(stmt.TxsSummry.TtlNtries.NbOfNtries)).toBe(entries.length);
    for (const n of stmt.Ntry) {
      expect(n.Sts).toBe("BOOK");
      expect(n.Amt["@Ccy"]).toBe("USD");
      expect(n.ValDt.Dt).toBe(n.BookgDt.Dt);
      expect(n.BookgDt.Dt >= month.start && n.BookgDt.Dt <= addDays(month.start, month.days + 2)).toBe(true);
    }
    expect(new Set(entries.map((e) => e.ref)).size).toBe(entries.length);
    expect(entries.map((e) => e.booked)).toEqual(entries.map((e) => e.booked).sort());
  });

  it("writes a report Tally's own Stripe parser reads without an error, every line paid by a payout of the month or by none yet", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-month-")), "settlement.csv");
    writeFileSync(file, month.settlementCsv);
    const meta: ReportMeta = { header: null, format: "" };
    const lines: SettlementLine[] = [];
    for await (const line of readReport(file, undefined, meta)) lines.push(line);
    expect(meta.format).toBe("stripe");
    expect(meta.header).toEqual([...SETTLEMENT_HEADER]);
    expect(lines).toHaveLength(seen.rows.length);
    const payments = new Map(seen.byType("payment_intent.succeeded").map((o) => [o.id as string, o]));
    for (const [i, line] of lines.entries()) {
      const row = seen.rows[i]!;
      expect(line.currency).toBe("USD");
      if (row.reporting_category === "charge") {
        // Keyed by the payment intent, at the amount the webhook posted.
        expect(line).toMatchObject({ kind: "PAYMENT", reference: row.payment_intent_id, amount: minor(row.gross) });
        expect(BigInt(payments.get(line.reference)!.amount_received as number)).toBe(line.amount);
      } else if (row.reporting_category === "refund")
        expect(line).toMatchObject({ kind: "REFUND", reference: row.source_id, amount: minor(row.gross) });
      expect(row.automatic_payout_id === "" || seen.paidOut.has(row.automatic_payout_id), row.automatic_payout_id).toBe(
        true,
      );
    }
    expect(seen.rows.map((r) => r.created_utc)).toEqual(seen.rows.map((r) => r.created_utc).sort());
    expect(new Set(seen.rows.map((r) => r.balance_transaction_id)).size).toBe(seen.rows.length);
  });

  it("expects balances that sum to zero, clearing holding exactly the report's total net", () => {
    const b = month.truth.balances;
    expect(Object.values(b).reduce((s, v) => s + v, 0n)).toBe(0n);
    const total = (pick: (r: Row) => bigint, category?: string) =>
      seen.rows.filter((r) => !category || r.reporting_category === category).reduce((s, r) => s + pick(r), 0n);
    // Every movement went through clearing, so what is left in it is what the report says Stripe still holds.
    expect(b["clearing:stripe"]).toBe(total((r) => minor(r.net)));
    expect(b["fees:stripe"]).toBe(total((r) => minor(r.fee)));
    expect(b[`bank:${month.destination}`]).toBe([...seen.paidOut.values()].reduce((s, v) => s + v, 0n));
    expect(b["disputes:stripe"]).toBe(
      -total((r) => minor(r.gross), "dispute") - total((r) => minor(r.gross), "dispute_reversal"),
    );
    const customers = Object.entries(b).filter(([k]) => k.startsWith("customer:"));
    expect(customers.reduce((s, [, v]) => s + v, 0n)).toBe(
      -total((r) => minor(r.gross), "charge") - total((r) => minor(r.gross), "refund"),
    );
    const refunds = seen.byType("refund.created");
    expect(refunds.length).toBeGreaterThan(0);
    expect(customers.length).toBeGreaterThan(5);
  });

  it("announces every movement by webhook except the dispute planted without one, and resends only identical bodies", () => {
    const undelivered = expectation("dispute_without_webhook");
    const withdrawn = new Set(seen.byType("charge.dispute.funds_withdrawn").map((o) => o.id));
    const reinstated = new Set(seen.byType("charge.dispute.funds_reinstated").map((o) => o.id));
    const closed = new Map(seen.byType("charge.dispute.closed").map((o) => [o.id, o.status]));
    const refunds = new Map(seen.byType("refund.created").map((o) => [o.id, o]));
    const payments = new Map(seen.byType("payment_intent.succeeded").map((o) => [o.id, o]));
    const disputes = seen.rows.filter((r) => r.reporting_category === "dispute");
    expect(disputes.length).toBe(4);
    for (const row of seen.rows) {
      const id = row.source_id;
      switch (row.reporting_category) {
        case "charge":
          expect(BigInt(payments.get(row.payment_intent_id)!.amount_received as number)).toBe(minor(row.gross));
          break;
        case "refund": {
          const refund = refunds.get(id)!;
          expect(refund.payment_intent).toBe(row.payment_intent_id);
          expect(BigInt(refund.amount as number)).toBe(-minor(row.gross));
          expect(-minor(row.gross)).toBeLessThanOrEqual(BigInt(payments.get(row.payment_intent_id)!.amount as number));
          break;
        }
        case "dispute":
          expect(withdrawn.has(id), id).toBe(id !== undelivered.reference);
          expect(closed.get(id)).toBe(
            seen.rows.some((r) => r.reporting_category === "dispute_reversal" && r.source_id === id) ? "won" : "lost",
          );
          break;
        case "dispute_reversal":
          expect(reinstated.has(id)).toBe(true);
          break;
      }
    }
    expect([...closed.values()].sort()).toEqual(["lost", "lost", "won", "won"]);
    expect(undelivered.cause).toBe("NEVER_DELIVERED");
    expect(undelivered.opensCase).toBe(false);
    const dispute = seen.byType("charge.dispute.funds_withdrawn")[0]!;
    expect(Object.keys(dispute).sort()).toEqual(
      [
        "amount",
        "charge",
        "created",
        "currency",
        "id",
        "metadata",
        "object",
        "payment_intent",
        "reason",
        "status",
      ].sort(),
    );
    expect(dispute).toMatchObject({
      object: "dispute",
      currency: "usd",
      status: "needs_response",
      reason: "fraudulent",
    });
    // Resends are the first send's bytes under its message id.
    const retries = seen.events.filter(({ d }) => d.note === "retry");
    expect(retries.length).toBeGreaterThan(0);
    for (const { d } of retries) {
      const first = month.deliveries.find((x) => x.messageId === d.messageId && x.note !== "retry")!;
      expect(first.seq).toBeLessThan(d.seq);
      expect(d.body).toBe(first.body);
    }
    expect(month.deliveries.map((d) => d.seq)).toEqual(month.deliveries.map((_, i) => i));
    expect(month.deliveries.every((d) => d.provider === "stripe" && d.signature === "valid")).toBe(true);
    for (const { e } of seen.events)
      expect(e).toMatchObject({ object: "event", livemode: false, api_version: expect.stringMatching(/^2025-/) });
  });

  it("plants the four defects on four different payouts away from the month's edges, none of them the combined credit", () => {
    expect(month.truth.expected.map((e) => [e.defect, e.kind])).toEqual([
      ["missing_fee", "PAYOUT_RESIDUAL"],
      ["short_payout", "PAYOUT_RESIDUAL"],
      ["missing_credit", "BANK_UNMATCHED"],
      ["dispute_without_webhook", "THEIRS_NOT_OURS"],
    ]);
    const undelivered = expectation("dispute_without_webhook");
    const disputeRow = seen.rows.find(
      (r) => r.reporting_category === "dispute" && r.source_id === undelivered.reference,
    )!;
    expect(disputeRow.automatic_payout_id).toBe(undelivered.payout);
    const onPayouts = [
      expectation("missing_fee").reference,
      expectation("short_payout").reference,
      expectation("missing_credit").reference,
      undelivered.payout,
    ];
    expect(new Set(onPayouts).size).toBe(4);
    const first = addDays(month.start, 3);
    const last = addDays(month.start, month.days - 4);
    for (const reference of onPayouts) {
      const p = month.truth.payouts.find((x) => x.reference === reference)!;
      expect(p.createdDay >= first && p.createdDay <= last, `${reference} on ${p.createdDay}`).toBe(true);
      expect(p.remittance).not.toBe("combined");
    }
    expect(disputeRow.created_utc.slice(0, 10) >= first && disputeRow.created_utc.slice(0, 10) <= last).toBe(true);
    // The undelivered dispute's payout balances once the dispute is posted from the settlement.
    expect(seen.paidOut.get(undelivered.payout)).toBe(seen.linesNet.get(undelivered.payout));
    expect(month.truth.payouts.filter((p) => p.defect).map((p) => p.defect)).toEqual(
      expect.arrayContaining(["missing_fee", "short_payout", "missing_credit"]),
    );
  });

  it("without defects, every payout is its lines' net, has its credit, and every dispute its webhook", () => {
    const clean = generateMonth({ seed: 20261101, defects: [] });
    const s = read(clean);
    expect(clean.truth.expected).toEqual([]);
    for (const p of clean.truth.payouts) {
      expect(s.paidOut.get(p.reference)).toBe(s.linesNet.get(p.reference));
      expect(p.bankBookingDate).not.toBeNull();
    }
    expect(s.byType("charge.dispute.funds_withdrawn")).toHaveLength(4);
    expect(s.rows.every((r) => r.reporting_category !== "charge" || minor(r.fee) > 0n)).toBe(true);
  });

  it("holds together for other seeds, lengths and volumes", () => {
    for (const options of [
      { seed: 1 },
      { seed: 2, days: 12, chargesPerDay: 3 },
      { seed: 3, days: 31, start: "2026-12-01", chargesPerDay: 40 },
    ]) {
      const m = generateMonth(options);
      const s = read(m);
      const residual = new Map(
        m.truth.expected.flatMap((e) => (e.kind === "PAYOUT_RESIDUAL" ? [[e.reference, e.residual]] : [])),
      );
      expect(residual.size).toBe(2);
      for (const p of m.truth.payouts)
        expect(s.paidOut.get(p.reference)! - s.linesNet.get(p.reference)!, `seed ${options.seed} ${p.reference}`).toBe(
          residual.get(p.reference) ?? 0n,
        );
      const first = addDays(m.start, 3);
      const last = addDays(m.start, m.days - 4);
      for (const e of m.truth.expected) {
        const p = m.truth.payouts.find((x) => x.reference === (e.kind === "THEIRS_NOT_OURS" ? e.payout : e.reference))!;
        expect(
          p.createdDay >= first && p.createdDay <= last,
          `seed ${options.seed} ${e.defect} on ${p.createdDay}`,
        ).toBe(true);
      }
      expect(Object.values(m.truth.balances).reduce((t, v) => t + v, 0n)).toBe(0n);
      expect(m.truth.balances["clearing:stripe"]).toBe(s.rows.reduce((t, r) => t + minor(r.net), 0n));
      expect(XMLValidator.validate(m.camt053)).toBe(true);
    }
  });

  it("refuses options it cannot honour, naming the problem", () => {
    expect(() => generateMonth({ seed: 1, days: 5 })).toThrow(/days must be a whole number ≥ 12, got 5/);
    expect(() => generateMonth({ seed: 1, start: "2026-02-30" })).toThrow(/2026-02-30 is not a day of the calendar/);
    expect(() => generateMonth({ seed: 1, start: "1 Nov 2026" })).toThrow(/start must be a date YYYY-MM-DD/);
    expect(() => generateMonth({ seed: 1, chargesPerDay: 0 })).toThrow(/chargesPerDay must be a whole number ≥ 1/);
    expect(() => generateMonth({ seed: 1, defects: ["nope" as never] })).toThrow(/unknown defect "nope"/);
    expect(() => generateMonth({ seed: 1, disputes: 1 })).toThrow(/dispute_without_webhook needs at least 2 disputes/);
    expect(() => generateMonth({ seed: 1, days: 12, chargesPerDay: 1 })).toThrow(/no charge left to dispute/);
  });
});
