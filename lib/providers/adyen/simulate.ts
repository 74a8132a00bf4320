// Adyen as the day generator plays it: standard notifications in batches of one to
// five items per POST, each item a movement of its own (AUTHORISATION: a payment,
// REFUND: a refund naming the payment's pspReference in originalReference), beside
// items that move no money (a refused authorisation, REPORT_AVAILABLE, OFFER_CLOSED,
// the CAPTURE that follows an authorisation). Items are unsigned here: each gets its
// additionalData.hmacSignature at send time (dev/simulator/sign.ts). Amounts are
// minor units. The batch is what is retried, whole; only its key order may change
// (Adyen signs fields, not bytes, and always sends value as a number and success as text).
//
// Its settlement: adyenSettlementBatch writes the Settlement Details Report of one batch
// closing over a day's movements, as ./report.ts reads it: a Settled record per payment
// with its commission and interchange kept (net = gross − those), a Refunded record per
// refund (keyed by the refund's pspReference in Modification Reference), per net currency
// the month's Fee record, and the batch's MerchantPayout of what is left (a batch whose
// costs exceed its sales carries the deficit to the next batch instead: a Balancetransfer
// credit, and no payout). Creation Date in CET, as an Amsterdam account's report is.
import { toDecimalText } from "@/lib/ledger/money";
import type { Random } from "@/lib/providers/simulation/random";
import {
  cappedRefund,
  chars,
  drawMoney,
  isoSeconds,
  reshape,
  type CurrencyMix,
  type ProviderScript,
  type SimMovement,
} from "@/lib/providers/simulation/script";

const MIX: CurrencyMix = [
  ["EUR", 40, 100, 200_000],
  ["USD", 25, 100, 250_000],
  ["GBP", 15, 100, 150_000],
  ["SEK", 12, 1_000, 2_000_000],
  ["JPY", 8, 100, 60_000],
];

const MERCHANT = "TallySimECOM";
const pspReference = (r: Random) => chars(r, 1, "123456789") + chars(r, 15, "0123456789");
/** The merchant's reference for the payment: "<account>/<order>", the signed field Tally reads the account from. */
const orderOf = (m: SimMovement) => `${m.account}/order-${m.reference.slice(-8)}`;

export function adyenBatch(items: object[]): object {
  return { live: "false", notificationItems: items.map((item) => ({ NotificationRequestItem: item })) };
}

function authorisation(m: SimMovement): object {
  return {
    additionalData: {
      "metadata.account": m.account,
      shopperReference: `shopper_${m.account}`,
      authCode: m.reference.slice(-6),
      cardSummary: m.reference.slice(-4),
      expiryDate: "03/2030",
    },
    amount: { currency: m.currency, value: m.amount },
    eventCode: "AUTHORISATION",
    eventDate: isoSeconds(m.created),
    merchantAccountCode: MERCHANT,
    merchantReference: orderOf(m),
    operations: ["CANCEL", "CAPTURE", "REFUND"],
    paymentMethod: "visa",
    pspReference: m.reference,
    reason: `${m.reference.slice(-6)}:${m.reference.slice(-4)}:03/2030`,
    success: "true",
  };
}

function refund(m: SimMovement): object {
  return {
    additionalData: {},
    amount: { currency: m.currency, value: m.amount },
    eventCode: "REFUND",
    eventDate: isoSeconds(m.created),
    merchantAccountCode: MERCHANT,
    merchantReference: `refund-${m.reference.slice(-8)}`,
    originalReference: m.paymentReference,
    paymentMethod: "visa",
    pspReference: m.reference,
    success: "true",
  };
}

/** The CAPTURE Adyen sends after an AUTHORISATION when capture notifications are on: the same money, not new money. */
function capture(m: SimMovement, r: Random): object {
  return {
    additionalData: {},
    amount: { currency: m.currency, value: m.amount },
    eventCode: "CAPTURE",
    eventDate: isoSeconds(m.created + 1),
    merchantAccountCode: MERCHANT,
    merchantReference: orderOf(m),
    originalReference: m.reference,
    paymentMethod: "visa",
    pspReference: pspReference(r),
    success: "true",
  };
}

/** A notification item that moves no money. */
export function adyenIgnoredItem(r: Random, created: number): object {
  const kind = r.int(0, 2);
  const base = {
    additionalData: {},
    eventDate: isoSeconds(created),
    merchantAccountCode: MERCHANT,
    pspReference: pspReference(r),
  };
  if (kind === 0) {
    const [currency, value] = drawMoney(r, MIX);
    return {
      ...base,
      additionalData: { refusalReasonRaw: "05 : Do not honor" },
      amount: { currency, value },
      eventCode: "AUTHORISATION",
      merchantReference: `order-${chars(r, 8)}`,
      paymentMethod: "mc",
      reason: "Refused",
      success: "false",
    };
  }
  if (kind === 1)
    return {
      ...base,
      amount: { currency: "EUR", value: 0 },
      eventCode: "REPORT_AVAILABLE",
      merchantReference: "",
      reason: `https://ca-test.adyen.com/reports/download/MerchantAccount/${MERCHANT}/settlement_detail_report_batch_${r.int(1, 999)}.csv`,
      success: "true",
    };
  const [currency, value] = drawMoney(r, MIX);
  return {
    ...base,
    amount: { currency, value },
    eventCode: "OFFER_CLOSED",
    merchantReference: `order-${chars(r, 8)}`,
    paymentMethod: "ideal",
    success: "true",
  };
}

export const adyenScript: ProviderScript = {
  provider: "adyen",
  refunds: true,
  money: (r) => drawMoney(r, MIX),
  paymentReference: pspReference,
  refundReference: pspReference,
  refundAmount: cappedRefund,
  secondTypeOf: "PAYMENT",
  events(m, r, secondType) {
    if (m.kind === "REFUND") return [refund(m)];
    return secondType ? [authorisation(m), capture(m, r)] : [authorisation(m)];
  },
  reformat: (body) => reshape(body, { reverseKeys: true }),
  ignored: (r, created) => adyenBatch([adyenIgnoredItem(r, created)]),
  malformed(r, created) {
    // Well-formed JSON Adyen signed, whose one item the parser cannot post: a fractional minor-unit value, or no date it can read.
    const [currency, value] = drawMoney(r, MIX);
    const item = {
      additionalData: {},
      amount: { currency, value },
      eventCode: "AUTHORISATION",
      eventDate: isoSeconds(created),
      merchantAccountCode: MERCHANT,
      merchantReference: `order-${chars(r, 8)}`,
      pspReference: pspReference(r),
      success: "true",
    };
    return JSON.stringify(
      adyenBatch([
        r.chance(0.5) ? { ...item, amount: { currency, value: value + 0.5 } } : { ...item, eventDate: "yesterday" },
      ]),
    );
  },
};

// ---- The Settlement Details Report ----

/** The classic 30 columns, in Adyen's order. */
export const ADYEN_SDR_HEADER = [
  "Company Account",
  "Merchant Account",
  "Psp Reference",
  "Merchant Reference",
  "Payment Method",
  "Creation Date",
  "TimeZone",
  "Type",
  "Modification Reference",
  "Gross Currency",
  "Gross Debit (GC)",
  "Gross Credit (GC)",
  "Exchange Rate",
  "Net Currency",
  "Net Debit (NC)",
  "Net Credit (NC)",
  "Commission (NC)",
  "Markup (NC)",
  "Scheme Fees (NC)",
  "Interchange (NC)",
  "Payment Method Variant",
  "Modification Merchant Reference",
  "Batch Number",
  "Reserved4",
  "Reserved5",
  "Reserved6",
  "Reserved7",
  "Reserved8",
  "Reserved9",
  "Reserved10",
] as const;

/** One record of the report; amounts in minor units, a record about no payment with its gross side empty. */
export type AdyenSdrRecord = {
  merchant: string;
  type: string;
  /** Unix seconds. */
  at: number;
  batch: number | string;
  psp?: string;
  merchantReference?: string;
  paymentMethod?: string;
  modification?: string;
  modificationMerchantReference?: string;
  /** The shopper's side; absent for the batch's own records (fees, corrections, the payout). */
  gross?: { currency: string; debit?: bigint; credit?: bigint };
  net: { currency: string; debit?: bigint; credit?: bigint };
  commission?: bigint;
  interchange?: bigint;
};

/** Creation Date as a CET account's report writes it (the zone's abbreviation is the TimeZone column). */
const cet = (unix: number) =>
  new Date((unix + 3600) * 1000)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, "");

const decimal = (minor: bigint | undefined, currency: string) =>
  minor === undefined ? "" : toDecimalText(minor, currency);
/** A field as CSV writes it: quoted when it holds a comma or a quote (Adyen's payout descriptions have commas). */
const field = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

export function adyenSettlementCsv(records: AdyenSdrRecord[], company = "TallySimCompany"): string {
  const rows = records.map((r) =>
    [
      company,
      r.merchant,
      r.psp ?? "",
      r.merchantReference ?? "",
      r.paymentMethod ?? "",
      cet(r.at),
      "CET",
      r.type,
      r.modification ?? "",
      r.gross?.currency ?? "",
      r.gross ? decimal(r.gross.debit, r.gross.currency) : "",
      r.gross ? decimal(r.gross.credit, r.gross.currency) : "",
      r.gross ? "1" : "",
      r.net.currency,
      decimal(r.net.debit, r.net.currency),
      decimal(r.net.credit, r.net.currency),
      decimal(r.commission, r.net.currency),
      "",
      "",
      decimal(r.interchange, r.net.currency),
      r.paymentMethod ? `${r.paymentMethod}credit` : "",
      r.modificationMerchantReference ?? "",
      String(r.batch),
      ...Array.from({ length: 7 }, () => ""),
    ]
      .map(field)
      .join(","),
  );
  return `${[ADYEN_SDR_HEADER.join(","), ...rows].join("\n")}\n`;
}

/** What Adyen keeps of a settled payment: 0.6% plus 10 minor units commission, 0.2% interchange. */
export const adyenCommission = (amount: number) => BigInt(Math.floor((amount * 6) / 1000) + 10);
export const adyenInterchange = (amount: number) => BigInt(Math.floor((amount * 2) / 1000));
/** The month's transaction fee record: 5 minor units a record, at least 50. */
export const adyenMonthlyFee = (records: number) => BigInt(Math.max(50, records * 5));

export type AdyenBatch = {
  csv: string;
  records: AdyenSdrRecord[];
  /** Per net currency: the payout's reference as ./report.ts keys it and its amount, or the deficit carried over. */
  payouts: { reference: string; currency: string; amount: bigint }[];
  carried: { currency: string; amount: bigint }[];
};

/**
 * The report of batch `batch` of `merchant` closing at `closedAt` (unix seconds) over
 * these movements (one tenant's, as one merchant account's report is), in their order.
 * Every record is settled in the currency the shopper paid in.
 */
export function adyenSettlementBatch(
  movements: readonly SimMovement[],
  o: { batch: number; closedAt: number; merchant?: string },
): AdyenBatch {
  const merchant = o.merchant ?? MERCHANT;
  const records: AdyenSdrRecord[] = [];
  const byCurrency = new Map<string, { net: bigint; records: number; last: number }>();
  const add = (currency: string, net: bigint, at: number) => {
    const c = byCurrency.get(currency) ?? { net: 0n, records: 0, last: at };
    byCurrency.set(currency, { net: c.net + net, records: c.records + 1, last: Math.max(c.last, at) });
  };
  for (const m of movements) {
    const amount = BigInt(m.amount);
    if (m.kind === "PAYMENT") {
      const commission = adyenCommission(m.amount);
      const interchange = adyenInterchange(m.amount);
      const net = amount - commission - interchange;
      records.push({
        merchant,
        type: "Settled",
        at: m.created,
        batch: o.batch,
        psp: m.reference,
        merchantReference: orderOf(m),
        paymentMethod: "visa",
        modification: m.reference,
        gross: { currency: m.currency, credit: amount },
        net: { currency: m.currency, credit: net },
        commission,
        interchange,
      });
      add(m.currency, net, m.created);
    } else {
      records.push({
        merchant,
        type: "Refunded",
        at: m.created,
        batch: o.batch,
        psp: m.paymentReference,
        merchantReference: `refund-${m.reference.slice(-8)}`,
        paymentMethod: "visa",
        modification: m.reference,
        gross: { currency: m.currency, debit: amount },
        net: { currency: m.currency, debit: amount },
      });
      add(m.currency, -amount, m.created);
    }
  }
  const month = new Date(o.closedAt * 1000).toLocaleString("en-GB", {
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  });
  const payouts: AdyenBatch["payouts"] = [];
  const carried: AdyenBatch["carried"] = [];
  for (const [currency, c] of byCurrency) {
    const fee = adyenMonthlyFee(c.records);
    records.push({
      merchant,
      type: "Fee",
      at: o.closedAt - 60,
      batch: o.batch,
      modification: `Transaction Fees ${month}`,
      net: { currency, debit: fee },
    });
    const left = c.net - fee;
    if (left > 0n) {
      records.push({
        merchant,
        type: "MerchantPayout",
        at: o.closedAt,
        batch: o.batch,
        modification: `TX${String(o.batch).padStart(12, "0")}XT batch ${o.batch}, ${merchant}`,
        net: { currency, debit: left },
      });
      payouts.push({ reference: `${merchant}:batch:${o.batch}:${currency}`, currency, amount: left });
    } else if (left < 0n) {
      // Costs over sales: the deficit goes to the next batch, and nothing to the bank.
      records.push({
        merchant,
        type: "Balancetransfer",
        at: o.closedAt,
        batch: o.batch,
        modification: "Balancetransfer",
        modificationMerchantReference: `Balancetransfer to batch ${o.batch + 1}`,
        net: { currency, credit: -left },
      });
      carried.push({ currency, amount: -left });
    }
  }
  return { csv: adyenSettlementCsv(records), records, payouts, carried };
}
