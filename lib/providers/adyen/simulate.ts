// Adyen as the day generator plays it: standard notifications in batches of one to
// five items per POST, each item a movement of its own (AUTHORISATION: a payment,
// REFUND: a refund naming the payment's pspReference in originalReference), beside
// items that move no money (a refused authorisation, REPORT_AVAILABLE, OFFER_CLOSED,
// the CAPTURE that follows an authorisation). Items are unsigned here: each gets its
// additionalData.hmacSignature at send time (dev/simulator/sign.ts). Amounts are
// minor units. The batch is what is retried, whole; only its key order may change
// (Adyen signs fields, not bytes, and always sends value as a number and success as text).
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
