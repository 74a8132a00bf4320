// Paystack as the day generator plays it: charge.success keyed by the merchant's
// transaction reference (Paystack Inline's "T" and 15 digits), refund.processed
// keyed by Paystack's numeric refund id and naming the charge in
// transaction_reference, refund.pending before it for the same refund, and events
// that move no money. Amounts are minor units (kobo, pesewas, cents). Retries may
// reorder keys, send null as "", numbers as strings, or metadata as a JSON string:
// all seen from Paystack and all read the same by lib/providers/paystack/parse.ts.
//
// Fees: every charge's transaction object (the API's) carries its fee (paystackFee:
// 1.5% + 100.00 from 2,500.00 up, capped at 2,000.00 in NGN; 2.9% elsewhere), while its
// charge.success webhook sends "fees": null, as Paystack's own published sample does:
// fees reach the ledger from the settlement. Disputes (SimDispute) are played by their
// webhooks (paystackDisputeEvents: create, remind, resolve) and by the Disputes API, a
// lost one also as the refund Paystack makes of it (paystackDisputeRefund).
import {
  cappedRefund,
  chars,
  drawMoney,
  isoMillis,
  reshape,
  type CurrencyMix,
  type ProviderScript,
  type SimMovement,
} from "@/lib/providers/simulation/script";

const MIX: CurrencyMix = [
  ["NGN", 60, 10_000, 50_000_000],
  ["GHS", 15, 100, 500_000],
  ["ZAR", 10, 500, 500_000],
  ["KES", 10, 1_000, 2_000_000],
  ["USD", 5, 100, 100_000],
];

const customerOf = (m: SimMovement) => ({
  id: 68_000 + Number.parseInt(m.account.replace(/\D/g, "").slice(-5) || "0", 10),
  first_name: null,
  last_name: null,
  email: `${m.account}@example.com`,
  customer_code: `CUS_${m.account
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(-14)
    .toLowerCase()}`,
  phone: null,
  metadata: null,
  risk_action: "default",
});

/** A successful charge as Paystack shapes it, in its webhook and in its transaction API alike. */
export function paystackTransaction(m: SimMovement) {
  return {
    id: paystackTransactionId(m),
    domain: "test",
    status: "success",
    reference: m.reference,
    amount: m.amount,
    message: null,
    gateway_response: "Approved by Financial Institution",
    paid_at: isoMillis(m.created),
    created_at: isoMillis(m.created - 20),
    channel: "card",
    currency: m.currency,
    ip_address: "41.242.49.37",
    metadata: { account: m.account, custom_fields: [] },
    fees: paystackFee(m),
    customer: customerOf(m),
    authorization: {
      authorization_code: `AUTH_${m.reference.slice(-8)}`,
      bin: "408408",
      last4: "4081",
      exp_month: "12",
      exp_year: "2030",
      card_type: "visa DEBIT",
      bank: "TEST BANK",
      country_code: "NG",
      brand: "visa",
      reusable: true,
    },
    plan: {},
  };
}

/** Paystack's numeric id of a charge (GET /transaction/:id), derived from its reference. */
export const paystackTransactionId = (m: Pick<SimMovement, "reference">) => Number(m.reference.slice(-9));

/**
 * A processed refund as Paystack's refund API returns it: the charge named only by its
 * id, and the settlement that deducted it (null until one has).
 */
export function paystackRefund(m: SimMovement, settlement: number | null = null) {
  return {
    id: Number(m.reference),
    integration: 463_433,
    domain: "test",
    transaction: paystackTransactionId({ reference: m.paymentReference! }),
    dispute: null,
    settlement,
    amount: m.amount,
    deducted_amount: m.amount,
    fully_deducted: true,
    currency: m.currency,
    channel: "card",
    status: "processed",
    refunded_by: "ops@merchant.example",
    refunded_at: isoMillis(m.created),
    expected_at: isoMillis(m.created + 86_400),
    customer_note: "Refund",
    merchant_note: "Refund",
    createdAt: isoMillis(m.created - 60),
    updatedAt: isoMillis(m.created),
  };
}

/**
 * What Paystack keeps of a charge, in its minor units, by integer arithmetic: NGN
 * 1.5% (+ 100.00 from 2,500.00 up), capped at 2,000.00, as Paystack's Nigerian
 * pricing reads; 2.9% in other currencies.
 */
export function paystackFee(m: Pick<SimMovement, "amount" | "currency">): number {
  if (m.currency === "NGN")
    return Math.min(Math.floor((m.amount * 15 + 500) / 1000) + (m.amount >= 250_000 ? 10_000 : 0), 200_000);
  return Math.floor((m.amount * 29 + 500) / 1000);
}

function chargeSuccess(m: SimMovement): object {
  // Paystack's published charge.success sample carries "fees": null; the fee is in its API.
  return { event: "charge.success", data: { ...paystackTransaction(m), fees: null } };
}

/** A dispute of one of the day's payments: lost (merchant-accepted, refund_amount taken) or won (declined). */
export type SimDispute = {
  id: number;
  payment: SimMovement;
  /** Minor units Paystack takes when it is lost; at most the payment. */
  refundAmount: number;
  outcome: "lost" | "won";
  /** Unix seconds. */
  created: number;
  resolved: number;
};

/** The dispute object as Paystack's webhooks and Disputes API show it, open or resolved. */
export function paystackDispute(d: SimDispute, stage: "open" | "resolved") {
  const resolved = stage === "resolved";
  return {
    id: d.id,
    refund_amount: d.refundAmount,
    currency: d.payment.currency,
    status: resolved ? "resolved" : "awaiting-merchant-feedback",
    resolution: resolved ? (d.outcome === "lost" ? "merchant-accepted" : "declined") : null,
    domain: "test",
    transaction: {
      ...paystackTransaction(d.payment),
      status: resolved && d.outcome === "lost" ? "reversed" : "success",
    },
    transaction_reference: null,
    category: "chargeback",
    customer: customerOf(d.payment),
    bin: "408408",
    last4: "4081",
    dueAt: isoMillis(d.created + 86_400),
    resolvedAt: resolved ? isoMillis(d.resolved) : null,
    evidence: null,
    attachments: null,
    note: null,
    history: [{ status: "pending", by: `${d.payment.account}@example.com`, createdAt: isoMillis(d.created) }],
    messages: [],
    created_at: isoMillis(d.created),
    updated_at: isoMillis(resolved ? d.resolved : d.created),
  };
}

/** The webhooks of a dispute, in the order Paystack sends them. */
export function paystackDisputeEvents(d: SimDispute): object[] {
  return [
    { event: "charge.dispute.create", data: paystackDispute(d, "open") },
    { event: "charge.dispute.remind", data: paystackDispute(d, "open") },
    { event: "charge.dispute.resolve", data: paystackDispute(d, "resolved") },
  ];
}

/** The refund by which Paystack carries out a lost dispute, naming it in `dispute`. */
export function paystackDisputeRefund(d: SimDispute, settlement: number | null) {
  return {
    id: 4_000_000 + d.id,
    integration: 463_433,
    domain: "test",
    transaction: paystackTransactionId(d.payment),
    dispute: d.id,
    settlement,
    amount: d.refundAmount,
    deducted_amount: d.refundAmount,
    fully_deducted: true,
    currency: d.payment.currency,
    channel: "card",
    status: "processed",
    refunded_by: "disputes@paystack.example",
    refunded_at: isoMillis(d.resolved),
    expected_at: isoMillis(d.resolved + 86_400),
    customer_note: `Dispute ${d.id}`,
    merchant_note: `Dispute ${d.id} accepted`,
    createdAt: isoMillis(d.resolved),
    updatedAt: isoMillis(d.resolved),
  };
}

function refundEvent(m: SimMovement, event: "refund.processed" | "refund.pending"): object {
  return {
    event,
    data: {
      id: Number(m.reference),
      status: event === "refund.processed" ? "processed" : "pending",
      transaction_reference: m.paymentReference,
      refund_reference: event === "refund.processed" ? `RF${m.reference}` : null,
      amount: m.amount,
      currency: m.currency,
      processor: "mpgs_zenith",
      customer: { first_name: null, last_name: null, email: `${m.account}@example.com` },
      integration: 463_433,
      domain: "test",
      ...(event === "refund.processed" && { refunded_at: isoMillis(m.created) }),
    },
  };
}

const IGNORED = [
  "transfer.success",
  "subscription.create",
  "customeridentification.success",
  "charge.dispute.create",
] as const;

export const paystackScript: ProviderScript = {
  provider: "paystack",
  refunds: true,
  money: (r) => drawMoney(r, MIX),
  paymentReference: (r) => `T${chars(r, 1, "123456789")}${chars(r, 14, "0123456789")}`,
  refundReference: (_r, _n, serial) => String(3_018_000 + serial),
  refundAmount: cappedRefund,
  secondTypeOf: "REFUND",
  events(m, _r, secondType) {
    if (m.kind === "PAYMENT") return [chargeSuccess(m)];
    return secondType
      ? [refundEvent(m, "refund.processed"), refundEvent(m, "refund.pending")]
      : [refundEvent(m, "refund.processed")];
  },
  reformat(body, r) {
    const style = r.int(0, 3);
    if (style < 3)
      return reshape(body, { reverseKeys: style === 0, nullToEmpty: style === 1, numbersToStrings: style === 2 });
    const data = (body as { data: Record<string, unknown> }).data;
    return data.metadata && typeof data.metadata === "object"
      ? { ...body, data: { ...data, metadata: JSON.stringify(data.metadata) } }
      : reshape(body, { reverseKeys: true });
  },
  ignored(r, created) {
    const event = r.pick(IGNORED);
    const data =
      event === "transfer.success"
        ? {
            id: r.int(1_000_000, 9_999_999),
            amount: r.int(10_000, 5_000_000),
            currency: "NGN",
            reference: chars(r, 16).toLowerCase(),
            status: "success",
            transfer_code: `TRF_${chars(r, 12).toLowerCase()}`,
            created_at: isoMillis(created),
          }
        : event === "charge.dispute.create"
          ? {
              id: r.int(1_000, 99_999),
              refund_amount: null,
              currency: "NGN",
              status: "awaiting-merchant-feedback",
              domain: "test",
              created_at: isoMillis(created),
            }
          : {
              id: r.int(1_000, 99_999),
              domain: "test",
              customer_code: `CUS_${chars(r, 14).toLowerCase()}`,
              createdAt: isoMillis(created),
            };
    return { event, data };
  },
  malformed(r, created) {
    return r.pick([
      '{"event":"charge.success","data":{"reference":"T',
      `{"event":"charge.success","data":{"reference":"T${chars(r, 15, "0123456789")}","amount":"125.50","currency":"NGN","status":"success","paid_at":"${isoMillis(created)}"}}`,
    ]);
  },
};
