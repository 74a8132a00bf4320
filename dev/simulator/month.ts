// A generated month of one Stripe account, deterministic for a seed, with everything
// reconciliation to the payout needs and the truth of what it must come to:
//
//   webhooks   payment_intent.succeeded for every charge (some retried, same body),
//              refund.created, charge.dispute.funds_withdrawn / funds_reinstated /
//              closed, payout.paid every day
//   settlement Stripe's itemized balance report with fee, net and automatic_payout_id:
//              every charge pays 2.9% + 0.30, a dispute 15.00; the payout created on
//              day D pays out every line created on day D−1 (a day netting ≤ 0 is
//              carried into the next payout; the last day's lines are not paid out yet)
//   bank       camt.053.001.02 of the payouts' bank account: each payout credited on
//              its arrival date or up to 2 days later, most naming their po_…, a few
//              only "STRIPE TRANSFER", one credit for two payouts of consecutive days;
//              rent, salaries, card fees and other payers' invoices around them
//
// Planted defects (each once, on a payout created away from the month's first and
// last 3 days; the residual is payout amount − its lines' net as the report states it):
//
// | defect                  | what is planted                                         | expected                                   |
// |-------------------------|---------------------------------------------------------|--------------------------------------------|
// | missing_fee             | one charge reported with fee 0.00, net = gross; its     | PAYOUT_RESIDUAL on that payout, residual   |
// |                         | payout still net of the real fee                        | −fee                                       |
// | short_payout            | one payout 1.00 less than its lines' net (webhook,      | PAYOUT_RESIDUAL on it, residual −100       |
// |                         | payout line and bank credit alike)                      |                                            |
// | missing_credit          | one payout's bank credit is not in the statement        | BANK_UNMATCHED on it                       |
// | dispute_without_webhook | one lost dispute's funds_withdrawn is never delivered   | THEIRS_NOT_OURS for its dp_…, cause        |
// |                         | (its report line is there)                              | NEVER_DELIVERED, resolved by posting it    |
// |                         |                                                         | from the settlement: no case               |
//
// The two residual payouts, the missing credit and the combined (N:1) credit are four
// different payouts, and none holds the undelivered dispute, so each defect is the one
// reason its case opens. truth.balances is the ledger once the deliveries and the
// settlement as reported are posted (fees are known only from the settlement, so the
// missing fee is not in it): the month's clearing balance is then exactly the report's
// total net, which the tests check from the CSV text alone.
import { closingBalance, writeCamt053, type BankTransactionCode, type CamtEntry } from "@/dev/simulator/camt053-writer";
import type { Delivery } from "@/dev/simulator/day";
import { toDecimalText } from "@/lib/ledger/money";
import { seeded } from "@/lib/providers/simulation/random";
import { cappedRefund, drawMoney, type SimMovement } from "@/lib/providers/simulation/script";
import { stripePaymentIntent, stripeRefund } from "@/lib/providers/stripe/simulate";

export const MONTH_DEFECTS = ["missing_fee", "short_payout", "missing_credit", "dispute_without_webhook"] as const;
export type MonthDefect = (typeof MONTH_DEFECTS)[number];

export const SETTLEMENT_HEADER = [
  "balance_transaction_id",
  "created_utc",
  "available_on_utc",
  "currency",
  "gross",
  "fee",
  "net",
  "reporting_category",
  "source_id",
  "description",
  "customer_facing_amount",
  "customer_facing_currency",
  "automatic_payout_id",
  "automatic_payout_effective_at_utc",
  "charge_id",
  "payment_intent_id",
] as const;

export type MonthOptions = {
  seed: number;
  /** The tenant's slug the deliveries are for. */
  tenant?: string;
  /** YYYY-MM-DD, the first day (UTC). */
  start?: string;
  days?: number;
  chargesPerDay?: number;
  /** Share of charges refunded (once each, in full or in part, within three days). */
  refundRate?: number;
  /** Chance of each further resend of a delivery, as the day generator retries. */
  retryRate?: number;
  /** Disputes in the month, alternately won and lost (at least 2 with dispute_without_webhook). */
  disputes?: number;
  defects?: readonly MonthDefect[];
  iban?: string;
};

export type MonthPayout = {
  reference: string;
  /** What Stripe paid out (payout.paid, the report's payout line, the bank credit), minor units. */
  amount: bigint;
  currency: "USD";
  /** YYYY-MM-DD */
  createdDay: string;
  /** Unix seconds. */
  createdAt: number;
  /** YYYY-MM-DD: the day after createdDay. */
  arrivalDate: string;
  destination: string;
  /** YYYY-MM-DD of the credit that carries it; null for the missing credit. */
  bankBookingDate: string | null;
  /** AcctSvcrRef of that credit. */
  bankEntryRef: string | null;
  /** How the credit names it: its po_…, nothing ("STRIPE TRANSFER"), or with another payout in one credit. */
  remittance: "reference" | "none" | "combined" | null;
  /** The other payout of a combined credit. */
  combinedWith?: string;
  /** Each line paid out: a charge's payment intent (pi_…), else its source_id (re_…, dp_… for a dispute and its reversal alike). */
  lineReferences: string[];
  balanceTransactions: string[];
  /** Sum of those lines' net as the report states it, minor units. */
  linesNet: bigint;
  defect?: "missing_fee" | "short_payout" | "missing_credit";
};

export type MonthExpectation =
  | {
      kind: "PAYOUT_RESIDUAL";
      defect: "missing_fee";
      /** The payout. */
      reference: string;
      /** Payout amount − lines net: −fee. */
      residual: bigint;
      /** The charge (payment intent) whose fee the report left out, and that fee. */
      line: string;
      fee: bigint;
      opensCase: true;
    }
  | { kind: "PAYOUT_RESIDUAL"; defect: "short_payout"; reference: string; residual: bigint; opensCase: true }
  | { kind: "BANK_UNMATCHED"; defect: "missing_credit"; reference: string; amount: bigint; opensCase: true }
  | {
      kind: "THEIRS_NOT_OURS";
      defect: "dispute_without_webhook";
      /** The dispute, dp_…. */
      reference: string;
      cause: "NEVER_DELIVERED";
      amount: bigint;
      /** The payout its line is in: balanced once the dispute is posted from the settlement. */
      payout: string;
      opensCase: false;
    };

export type MonthDispute = {
  reference: string;
  charge: string;
  paymentIntent: string;
  amount: bigint;
  outcome: "won" | "lost";
  withdrawnAt: number;
  reinstatedAt: number | null;
  closedAt: number;
  withdrawalDelivered: boolean;
};

export type MonthTruth = {
  payouts: MonthPayout[];
  expected: MonthExpectation[];
  /** Account code → balance in minor units USD, debits positive, credits negative. */
  balances: Record<string, bigint>;
  disputes: MonthDispute[];
  bank: {
    iban: string;
    currency: "USD";
    /** YYYY-MM-DD, inclusive: the month and 3 days after it. */
    from: string;
    to: string;
    opening: bigint;
    closing: bigint;
    entries: number;
  };
};

export type Month = {
  tenant: string;
  start: string;
  days: number;
  currency: "USD";
  /** Stripe's id of the bank account (ba_…): payout.paid's destination, the ledger's bank:<destination>. */
  destination: string;
  iban: string;
  /** In send order; every one correctly signed when sent (dev/simulator/sign.ts). */
  deliveries: Delivery[];
  settlementCsv: string;
  camt053: string;
  truth: MonthTruth;
  options: Required<MonthOptions>;
};

const DAY = 86_400;
const API_VERSION = "2025-09-30.clover";
const DISPUTE_FEE = 1500n;
const SHORT_BY = 100n;
/** Stripe's standard US card pricing: 2.9% + 0.30, the percentage rounded half up to the cent. */
const feeOf = (amount: bigint) => (amount * 29n + 500n) / 1000n + 30n;
/** USD only, 5.00 to 600.00, most of them small (drawMoney squares its draw). */
const USD_MIX = [["USD", 100, 500, 60_000]] as const;
/** Days at each end of the month where no defect is planted. */
const EDGE = 3;

type Charge = {
  pi: string;
  ch: string;
  order: number;
  customer: string;
  amount: bigint;
  created: number;
  refund?: { re: string; amount: bigint; created: number };
  disputed: boolean;
};
type Dispute = MonthDispute & { chargeOf: Charge };
type Category = "charge" | "refund" | "dispute" | "dispute_reversal" | "payout";
type Line = {
  txn: string;
  created: number;
  category: Category;
  sourceId: string;
  description: string;
  gross: bigint;
  /** What Stripe charged. */
  fee: bigint;
  /** What the report says it charged (differs only for the missing fee). */
  reportedFee: bigint;
  charge?: Charge;
  customerFacing: bigint | null;
  payout: Payout | null;
};
type Payout = {
  reference: string;
  createdAt: number;
  createdDay: number;
  amount: bigint;
  lines: Line[];
  defect?: MonthPayout["defect"];
  credit?: { bookingDay: number; remittance: "reference" | "none" | "combined"; with?: Payout; entry?: CamtEntry };
};
type Sent = { at: number; body: string; reference: string | null; note: Delivery["note"]; messageId: string };

function resolve(input: MonthOptions): Required<MonthOptions> {
  const o: Required<MonthOptions> = {
    tenant: "month",
    start: "2026-11-01",
    days: 30,
    chargesPerDay: 20,
    refundRate: 0.06,
    retryRate: 0.1,
    disputes: 4,
    defects: MONTH_DEFECTS,
    iban: "DE89370400440532013000",
    ...input,
  };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(o.start) || Number.isNaN(Date.parse(`${o.start}T00:00:00Z`)))
    throw new Error(`start must be a date YYYY-MM-DD, got "${o.start}"`);
  if (new Date(`${o.start}T00:00:00Z`).toISOString().slice(0, 10) !== o.start)
    throw new Error(`start ${o.start} is not a day of the calendar`);
  // Disputes are opened from day 3 and settle within 7 days; the defects need payouts away from both edges.
  if (!Number.isInteger(o.days) || o.days < 12) throw new Error(`days must be a whole number ≥ 12, got ${o.days}`);
  if (!Number.isInteger(o.chargesPerDay) || o.chargesPerDay < 1)
    throw new Error(`chargesPerDay must be a whole number ≥ 1, got ${o.chargesPerDay}`);
  if (!Number.isInteger(o.disputes) || o.disputes < 0) throw new Error(`disputes must be a whole number ≥ 0`);
  if (o.defects.includes("dispute_without_webhook") && o.disputes < 2)
    throw new Error("dispute_without_webhook needs at least 2 disputes (it takes the first lost one)");
  for (const [name, rate] of Object.entries({ refundRate: o.refundRate, retryRate: o.retryRate }))
    if (!(rate >= 0 && rate < 1)) throw new Error(`${name} must be in [0, 1), got ${rate}`);
  for (const d of o.defects)
    if (!(MONTH_DEFECTS as readonly string[]).includes(d))
      throw new Error(`unknown defect "${d}" (known: ${MONTH_DEFECTS.join(", ")})`);
  return o;
}

export function generateMonth(input: MonthOptions): Month {
  const o = resolve(input);
  const r = seeded(o.seed);
  const startUnix = Date.parse(`${o.start}T00:00:00Z`) / 1000;
  const dayStart = (d: number) => startUnix + d * DAY;
  const dayOf = (unix: number) => Math.floor((unix - startUnix) / DAY);
  const date = (d: number) => new Date(dayStart(d) * 1000).toISOString().slice(0, 10);
  const monthEnd = dayStart(o.days);
  const defects = new Set(o.defects);

  const destination = r.id("ba_");
  const customers = Array.from({ length: Math.max(8, Math.ceil(o.chargesPerDay * 1.5)) }, () => r.id("cus_", 14));

  // Charges, and whether each is refunded, drawn day by day.
  const charges: Charge[] = [];
  for (let d = 0; d < o.days; d++) {
    for (let k = 0; k < o.chargesPerDay; k++) {
      const created = dayStart(d) + r.int(0, DAY - 1);
      const [, amount] = drawMoney(r, USD_MIX);
      const pi = r.id("pi_");
      const c: Charge = {
        pi,
        ch: `ch_${pi.slice(3)}`,
        order: 1000 + charges.length + 1,
        customer: r.pick(customers),
        amount: BigInt(amount),
        created,
        disputed: false,
      };
      if (r.chance(o.refundRate)) {
        const at = created + r.int(1_800, 3 * DAY);
        const fraction = r.pick([1, 0.5, 0.25]);
        const re = r.id("re_");
        if (at < monthEnd)
          c.refund = { re, amount: BigInt(cappedRefund(movementOf(c, o.tenant), 0, fraction)), created: at };
      }
      charges.push(c);
    }
  }

  // Disputes spread over the month, on charges at least two days old and never refunded; won and lost in turn.
  const disputes: Dispute[] = [];
  const firstDay = EDGE;
  const lastDay = o.days - 8;
  for (let i = 0; i < o.disputes; i++) {
    const day = firstDay + Math.floor(((i + 0.5) * (lastDay - firstDay + 1)) / o.disputes);
    const candidates = charges.filter((c) => dayOf(c.created) <= day - 2 && !c.refund && !c.disputed);
    if (candidates.length === 0)
      throw new Error(`no charge left to dispute on day ${day + 1}: ask for fewer disputes or more charges per day`);
    const c = r.pick(candidates);
    c.disputed = true;
    const withdrawnAt = dayStart(day) + r.int(0, DAY - 1);
    const settledAt = withdrawnAt + r.int(3, 6) * DAY + r.int(0, 3_600);
    const won = i % 2 === 0;
    disputes.push({
      reference: r.id("dp_"),
      charge: c.ch,
      paymentIntent: c.pi,
      amount: c.amount,
      outcome: won ? "won" : "lost",
      withdrawnAt,
      reinstatedAt: won ? settledAt : null,
      closedAt: won ? settledAt + 60 : settledAt,
      withdrawalDelivered: !(defects.has("dispute_without_webhook") && i === 1),
      chargeOf: c,
    });
  }

  // The report's lines, before payouts.
  const lines: Line[] = [];
  const line = (l: Omit<Line, "txn" | "reportedFee" | "payout">) =>
    lines.push({ ...l, txn: r.id("txn_"), reportedFee: l.fee, payout: null });
  for (const c of charges) {
    line({
      created: c.created,
      category: "charge",
      sourceId: c.ch,
      description: `Order ${c.order}`,
      gross: c.amount,
      fee: feeOf(c.amount),
      charge: c,
      customerFacing: c.amount,
    });
    if (c.refund)
      line({
        created: c.refund.created,
        category: "refund",
        sourceId: c.refund.re,
        description: `REFUND FOR CHARGE (Order ${c.order})`,
        gross: -c.refund.amount,
        fee: 0n,
        charge: c,
        customerFacing: c.refund.amount,
      });
  }
  for (const d of disputes) {
    line({
      created: d.withdrawnAt,
      category: "dispute",
      sourceId: d.reference,
      description: `Chargeback withdrawal for ${d.charge}`,
      gross: -d.amount,
      fee: DISPUTE_FEE,
      charge: d.chargeOf,
      customerFacing: null,
    });
    if (d.reinstatedAt !== null)
      line({
        created: d.reinstatedAt,
        category: "dispute_reversal",
        sourceId: d.reference,
        description: `Chargeback reversal for ${d.charge}`,
        gross: d.amount,
        fee: 0n,
        charge: d.chargeOf,
        customerFacing: null,
      });
  }
  lines.sort((a, b) => a.created - b.created || (a.txn < b.txn ? -1 : 1));

  // Payouts: day D pays out day D−1's lines (and any carried), when they net above zero.
  const payouts: Payout[] = [];
  const net = (ls: Line[], fee: "fee" | "reportedFee") => ls.reduce((s, l) => s + l.gross - l[fee], 0n);
  let pending: Line[] = [];
  for (let d = 1; d < o.days; d++) {
    pending.push(...lines.filter((l) => dayOf(l.created) === d - 1));
    const amount = net(pending, "fee");
    if (amount <= 0n) continue;
    const p: Payout = {
      reference: r.id("po_"),
      createdAt: dayStart(d) + r.int(600, 4 * 3_600),
      createdDay: d,
      amount,
      lines: pending,
    };
    for (const l of pending) l.payout = p;
    payouts.push(p);
    pending = [];
  }

  // Where the defects and the unusual credits go: never two on one payout.
  const used = new Set<Payout>();
  const undelivered = disputes.find((d) => !d.withdrawalDelivered);
  const undeliveredPayout = undelivered
    ? lines.find((l) => l.category === "dispute" && l.sourceId === undelivered.reference)!.payout
    : null;
  if (undeliveredPayout) used.add(undeliveredPayout);
  const inside = (p: Payout) => p.createdDay >= EDGE && p.createdDay <= o.days - 1 - EDGE;
  const choose = (what: string, ok: (p: Payout) => boolean): Payout => {
    const candidates = payouts.filter((p) => !used.has(p) && ok(p));
    if (candidates.length === 0) throw new Error(`no payout left for ${what}: make the month longer`);
    const p = r.pick(candidates);
    used.add(p);
    return p;
  };
  const pairs = payouts.flatMap((p, i) => {
    const next = payouts[i + 1];
    return next && next.createdDay === p.createdDay + 1 && inside(p) && inside(next) && !used.has(p) && !used.has(next)
      ? [[p, next] as const]
      : [];
  });
  if (pairs.length === 0) throw new Error("no two payouts on consecutive days for the combined credit");
  const [first, second] = r.pick(pairs);
  used.add(first);
  used.add(second);

  let missingFee: { payout: Payout; line: Line } | null = null;
  if (defects.has("missing_fee")) {
    const payout = choose("missing_fee", (p) => inside(p) && p.lines.some((l) => l.category === "charge"));
    const l = r.pick(payout.lines.filter((x) => x.category === "charge"));
    l.reportedFee = 0n;
    payout.defect = "missing_fee";
    missingFee = { payout, line: l };
  }
  let short: Payout | null = null;
  if (defects.has("short_payout")) {
    short = choose("short_payout", (p) => inside(p) && p.amount > SHORT_BY);
    short.amount -= SHORT_BY;
    short.defect = "short_payout";
  }
  let missingCredit: Payout | null = null;
  if (defects.has("missing_credit")) {
    missingCredit = choose("missing_credit", inside);
    missingCredit.defect = "missing_credit";
  }
  // Credits without a reference are found by amount and date alone: give them amounts no other payout has.
  const amountCount = new Map<bigint, number>();
  for (const p of payouts) amountCount.set(p.amount, (amountCount.get(p.amount) ?? 0) + 1);
  const unnamed = new Set<Payout>();
  for (let i = 0; i < 3; i++) unnamed.add(choose("a credit without reference", (p) => amountCount.get(p.amount) === 1));

  // The payouts' bank credits.
  const STRIPE_NAME = "STRIPE PAYMENTS UK LTD";
  const RECEIVED: BankTransactionCode = ["PMNT", "RCDT", "XBCT"];
  const SENT: BankTransactionCode = ["PMNT", "ICDT", "XBCT"];
  const CHARGES: BankTransactionCode = ["ACMT", "MDOP", "CHRG"];
  type Draft = Omit<CamtEntry, "accountServicerRef" | "bookingDate" | "valueDate"> & { day: number; payouts: Payout[] };
  const drafts: Draft[] = [];
  for (const p of payouts) {
    if (p === missingCredit || p === first) continue;
    const arrival = p.createdDay + 1;
    if (p === second) {
      // Within both payouts' windows: the first arrived a day earlier, and the bank may book up to 2 days late.
      const day = arrival + r.int(0, 1);
      first.credit = { bookingDay: day, remittance: "combined", with: second };
      p.credit = { bookingDay: day, remittance: "combined", with: first };
      drafts.push({
        day,
        payouts: [first, second],
        amount: first.amount + second.amount,
        direction: "CRDT",
        remittance: [`STRIPE PAYOUT ${first.reference} ${second.reference}`],
        counterparty: STRIPE_NAME,
        code: RECEIVED,
      });
      continue;
    }
    const day = arrival + r.int(0, 2);
    const remittance = unnamed.has(p) ? "none" : "reference";
    p.credit = { bookingDay: day, remittance };
    drafts.push({
      day,
      payouts: [p],
      amount: p.amount,
      direction: "CRDT",
      remittance: [remittance === "none" ? "STRIPE TRANSFER" : `STRIPE PAYOUT ${p.reference}`],
      counterparty: STRIPE_NAME,
      code: RECEIVED,
    });
  }
  // Everything else on the account. Other payers' amounts never equal a payout's, nor the combined credit's.
  const month = o.start.slice(0, 7);
  const taken = new Set([...payouts.map((p) => p.amount), first.amount + second.amount]);
  const other = (day: number, direction: "CRDT" | "DBIT", amount: bigint, remittance: string, counterparty: string) =>
    drafts.push({
      day,
      payouts: [],
      amount,
      direction,
      remittance: [remittance],
      counterparty,
      code: direction === "CRDT" ? RECEIVED : SENT,
    });
  other(1, "DBIT", BigInt(r.int(420_000, 520_000)), `RENT ${month} OFFICE RHEINAUHAFEN`, "HAUSVERWALTUNG RHEIN GMBH");
  const payday = Math.min(24, o.days - 2);
  for (const name of ["J. MEYER", "A. OKAFOR", "L. NOWAK"])
    other(payday, "DBIT", BigInt(r.int(300_000, 650_000)), `SALARY ${month} ${name}`, name);
  for (let d = 6; d < o.days; d += 7)
    drafts.push({
      day: d,
      payouts: [],
      amount: BigInt(r.int(900, 6_500)),
      direction: "DBIT",
      remittance: [`CARD FEES WEEK ${Math.floor(d / 7) + 1} ${month}`],
      counterparty: "COMMERZBANK AG",
      code: CHARGES,
    });
  drafts.push({
    day: o.days - 1,
    payouts: [],
    amount: 1_500n,
    direction: "DBIT",
    remittance: [`ACCOUNT MAINTENANCE FEE ${month}`],
    counterparty: "COMMERZBANK AG",
    code: CHARGES,
  });
  for (const payer of ["ACME GMBH", "NORDWIND AG", "OAK & FIG LTD", "BLAUER HIMMEL KG"]) {
    let amount: bigint;
    do amount = BigInt(r.int(50_000, 900_000));
    while (taken.has(amount));
    other(r.int(2, o.days - 2), "CRDT", amount, `INVOICE ${r.int(1000, 9999)} ${payer}`, payer);
  }
  drafts.sort((a, b) => a.day - b.day);
  const entries: CamtEntry[] = drafts.map(({ day, payouts: paid, ...e }, i) => {
    const booked = date(day);
    const entry: CamtEntry = {
      ...e,
      bookingDate: booked,
      valueDate: booked,
      accountServicerRef: `${booked.replaceAll("-", "")}${String(i + 1).padStart(5, "0")}`,
    };
    for (const p of paid) p.credit!.entry = entry;
    return entry;
  });
  const statementTo = date(o.days + 2);
  const opening = BigInt(r.int(20_000_000, 30_000_000));
  const statement = {
    messageId: `CAMT053-${statementTo.replaceAll("-", "")}-${r.id("", 8)}`,
    statementId: `${o.iban.slice(-10)}-${o.start}`,
    createdAt: `${date(o.days + 3)}T06:00:00`,
    from: o.start,
    to: statementTo,
    iban: o.iban,
    bic: "COBADEFFXXX",
    owner: `${o.tenant.toUpperCase()} GMBH`,
    currency: "USD",
    opening,
    entries,
  };
  const camt053 = writeCamt053(statement);

  // Webhooks, each at the time Stripe sends it, resent now and then.
  const sent: Sent[] = [];
  const send = (at: number, type: string, object: object, reference: string | null, note: "first" | "ignored") => {
    const body = JSON.stringify({
      id: r.id("evt_"),
      object: "event",
      api_version: API_VERSION,
      created: at,
      livemode: false,
      type,
      data: { object },
    });
    const messageId = r.id("msg_");
    sent.push({ at, body, reference, note, messageId });
    let retryAt = at;
    while (r.chance(o.retryRate)) {
      retryAt += r.int(30, 3_600);
      sent.push({ at: retryAt, body, reference, note: "retry", messageId });
    }
  };
  for (const c of charges) {
    send(c.created, "payment_intent.succeeded", stripePaymentIntent(movementOf(c, o.tenant)), c.pi, "first");
    if (c.refund) {
      const refund: SimMovement = {
        ...movementOf(c, o.tenant),
        kind: "REFUND",
        reference: c.refund.re,
        paymentReference: c.pi,
        amount: Number(c.refund.amount),
        created: c.refund.created,
      };
      send(c.refund.created, "refund.created", stripeRefund(refund), c.refund.re, "first");
    }
  }
  const disputeObject = (d: Dispute, status: string) => ({
    id: d.reference,
    object: "dispute",
    amount: Number(d.amount),
    currency: "usd",
    charge: d.charge,
    payment_intent: d.paymentIntent,
    status,
    reason: "fraudulent",
    created: d.withdrawnAt,
    metadata: {},
  });
  for (const d of disputes) {
    if (d.withdrawalDelivered)
      send(d.withdrawnAt, "charge.dispute.funds_withdrawn", disputeObject(d, "needs_response"), d.reference, "first");
    if (d.reinstatedAt !== null)
      send(d.reinstatedAt, "charge.dispute.funds_reinstated", disputeObject(d, "won"), d.reference, "first");
    // Closing moves no money: the withdrawal (and any reinstatement) already did.
    send(d.closedAt, "charge.dispute.closed", disputeObject(d, d.outcome), null, "ignored");
  }
  for (const p of payouts) {
    const arrival = dayStart(p.createdDay + 1);
    send(
      arrival + r.int(3_600, 6 * 3_600),
      "payout.paid",
      {
        id: p.reference,
        object: "payout",
        amount: Number(p.amount),
        currency: "usd",
        arrival_date: arrival,
        created: p.createdAt,
        destination,
        status: "paid",
        automatic: true,
        method: "standard",
        type: "bank_account",
        metadata: {},
      },
      p.reference,
      "first",
    );
  }
  // Stable: a retry sent in the same second as its first send stays after it.
  sent.sort((a, b) => a.at - b.at);
  const deliveries: Delivery[] = sent.map((s, seq) => ({
    seq,
    tenant: o.tenant,
    provider: "stripe",
    body: s.body,
    signature: "valid",
    messageId: s.messageId,
    note: s.note,
    reference: s.reference,
  }));

  // The report, with the payouts' own lines.
  const payoutLines: Line[] = payouts.map((p) => ({
    txn: r.id("txn_"),
    created: p.createdAt,
    category: "payout",
    sourceId: p.reference,
    description: "STRIPE PAYOUT",
    gross: -p.amount,
    fee: 0n,
    reportedFee: 0n,
    customerFacing: null,
    payout: p,
  }));
  const report = [...lines, ...payoutLines].sort((a, b) => a.created - b.created || (a.txn < b.txn ? -1 : 1));
  const settlementCsv = writeSettlementCsv(report, (d) => date(d), dayOf);

  // The ledger once all of it is posted.
  const balances = new Map<string, bigint>();
  const post = (debit: string, credit: string, amount: bigint) => {
    balances.set(debit, (balances.get(debit) ?? 0n) + amount);
    balances.set(credit, (balances.get(credit) ?? 0n) - amount);
  };
  const CLEARING = "clearing:stripe";
  for (const l of lines) {
    const customer = `customer:${l.charge!.customer}`;
    if (l.category === "charge") post(CLEARING, customer, l.gross);
    if (l.category === "refund") post(customer, CLEARING, -l.gross);
    if (l.category === "dispute") post("disputes:stripe", CLEARING, -l.gross);
    if (l.category === "dispute_reversal") post(CLEARING, "disputes:stripe", l.gross);
    if (l.reportedFee > 0n) post("fees:stripe", CLEARING, l.reportedFee);
  }
  for (const p of payouts) post(`bank:${destination}`, CLEARING, p.amount);

  const truthPayouts: MonthPayout[] = payouts.map((p) => ({
    reference: p.reference,
    amount: p.amount,
    currency: "USD",
    createdDay: date(p.createdDay),
    createdAt: p.createdAt,
    arrivalDate: date(p.createdDay + 1),
    destination,
    bankBookingDate: p.credit ? date(p.credit.bookingDay) : null,
    bankEntryRef: p.credit?.entry?.accountServicerRef ?? null,
    remittance: p.credit?.remittance ?? null,
    ...(p.credit?.with && { combinedWith: p.credit.with.reference }),
    lineReferences: p.lines.map((l) => (l.category === "charge" ? l.charge!.pi : l.sourceId)),
    balanceTransactions: p.lines.map((l) => l.txn),
    linesNet: net(p.lines, "reportedFee"),
    ...(p.defect && { defect: p.defect }),
  }));
  const expected: MonthExpectation[] = [];
  if (missingFee)
    expected.push({
      kind: "PAYOUT_RESIDUAL",
      defect: "missing_fee",
      reference: missingFee.payout.reference,
      residual: -missingFee.line.fee,
      line: missingFee.line.charge!.pi,
      fee: missingFee.line.fee,
      opensCase: true,
    });
  if (short)
    expected.push({
      kind: "PAYOUT_RESIDUAL",
      defect: "short_payout",
      reference: short.reference,
      residual: -SHORT_BY,
      opensCase: true,
    });
  if (missingCredit)
    expected.push({
      kind: "BANK_UNMATCHED",
      defect: "missing_credit",
      reference: missingCredit.reference,
      amount: missingCredit.amount,
      opensCase: true,
    });
  if (undelivered && undeliveredPayout)
    expected.push({
      kind: "THEIRS_NOT_OURS",
      defect: "dispute_without_webhook",
      reference: undelivered.reference,
      cause: "NEVER_DELIVERED",
      amount: undelivered.amount,
      payout: undeliveredPayout.reference,
      opensCase: false,
    });

  return {
    tenant: o.tenant,
    start: o.start,
    days: o.days,
    currency: "USD",
    destination,
    iban: o.iban,
    deliveries,
    settlementCsv,
    camt053,
    truth: {
      payouts: truthPayouts,
      expected,
      balances: Object.fromEntries([...balances].sort(([a], [b]) => (a < b ? -1 : 1))),
      disputes: disputes.map(({ chargeOf: _charge, ...d }) => d),
      bank: {
        iban: o.iban,
        currency: "USD",
        from: statement.from,
        to: statement.to,
        opening,
        closing: closingBalance(statement),
        entries: entries.length,
      },
    },
    options: o,
  };
}

function movementOf(c: Charge, tenant: string): SimMovement {
  return {
    tenant,
    provider: "stripe",
    kind: "PAYMENT",
    reference: c.pi,
    chargeId: c.ch,
    account: c.customer,
    amount: Number(c.amount),
    currency: "USD",
    created: c.created,
  };
}

const csvField = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
const csvTime = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 19).replace("T", " ");
const usd = (minor: bigint) => toDecimalText(minor, "USD");

function writeSettlementCsv(report: Line[], date: (day: number) => string, dayOf: (unix: number) => number): string {
  const rows = report.map((l) => {
    const payout = l.payout;
    const isPayout = l.category === "payout";
    // A line is available when the next day's payout sweeps it; a payout line at once.
    const available = isPayout ? csvTime(l.created) : `${date(dayOf(l.created) + 1)} 00:00:00`;
    const fields: Record<(typeof SETTLEMENT_HEADER)[number], string> = {
      balance_transaction_id: l.txn,
      created_utc: csvTime(l.created),
      available_on_utc: available,
      currency: "usd",
      gross: usd(l.gross),
      fee: usd(l.reportedFee),
      net: usd(l.gross - l.reportedFee),
      reporting_category: l.category,
      source_id: l.sourceId,
      description: l.description,
      customer_facing_amount: l.customerFacing === null ? "" : usd(l.customerFacing),
      customer_facing_currency: l.customerFacing === null ? "" : "usd",
      automatic_payout_id: payout?.reference ?? "",
      automatic_payout_effective_at_utc: payout ? `${date(payout.createdDay + 1)} 00:00:00` : "",
      charge_id: l.charge?.ch ?? "",
      payment_intent_id: l.charge?.pi ?? "",
    };
    return SETTLEMENT_HEADER.map((h) => csvField(fields[h])).join(",");
  });
  return `${[SETTLEMENT_HEADER.join(","), ...rows].join("\n")}\n`;
}

/** JSON with bigints as decimal strings (truth.json, and a deep comparison in tests). */
export function monthJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v), space);
}
