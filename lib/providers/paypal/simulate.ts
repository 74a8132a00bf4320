// PayPal (Orders v2 / Payments v2) as the day generator plays it:
// PAYMENT.CAPTURE.COMPLETED keyed by the capture id, PAYMENT.CAPTURE.REFUNDED keyed
// by the refund id with its `up` link naming the capture, CHECKOUT.ORDER.COMPLETED
// for the same payment (another event type, the order around the capture: no new
// money), and events that move no money. Amounts are major-unit decimal strings made
// from exact minor units by lib/money's toDecimalText. Retries may only reorder keys:
// PayPal's payloads carry no nulls and no numbers for a serialiser to change.
import { createHash } from "node:crypto";
import { toDecimalText } from "@/lib/ledger/money";
import type { Random } from "@/lib/providers/simulation/random";
import {
  cappedRefund,
  chars,
  drawMoney,
  isoMillis,
  isoSeconds,
  reshape,
  type CurrencyMix,
  type ProviderScript,
  type SimMovement,
} from "@/lib/providers/simulation/script";

const MIX: CurrencyMix = [
  ["USD", 50, 100, 250_000],
  ["EUR", 25, 100, 200_000],
  ["GBP", 12, 100, 150_000],
  ["CAD", 8, 100, 200_000],
  ["JPY", 5, 100, 60_000],
];

const API = "https://api.sandbox.paypal.com";
const paypalId = (r: Random) => `${chars(r, 1, "123456789")}${chars(r, 16)}`;
const eventId = (r: Random) => `WH-${chars(r, 17)}-${chars(r, 17)}`;
const money = (minor: number, currency: string) => ({
  currency_code: currency,
  value: toDecimalText(BigInt(minor), currency),
});
const orderOf = (m: SimMovement) => `5O${m.reference.slice(2)}`;

/** PayPal's fee of a capture, as the simulator charges it: 3.49% + 0.49, never more than the capture. */
export const paypalFee = (amount: number) => Math.min(amount, Math.round(amount * 0.0349) + 49);

/** The capture as PayPal shows it, in a webhook's resource and from GET /v2/payments/captures/{id} (dev/simulator/paypal-api.ts). */
export function captureResource(m: SimMovement) {
  const fee = paypalFee(m.amount);
  return {
    amount: money(m.amount, m.currency),
    seller_protection: { status: "ELIGIBLE", dispute_categories: ["ITEM_NOT_RECEIVED", "UNAUTHORIZED_TRANSACTION"] },
    supplementary_data: { related_ids: { order_id: orderOf(m) } },
    update_time: isoSeconds(m.created),
    create_time: isoSeconds(m.created),
    final_capture: true,
    seller_receivable_breakdown: {
      gross_amount: money(m.amount, m.currency),
      paypal_fee: money(fee, m.currency),
      net_amount: money(m.amount - fee, m.currency),
    },
    custom_id: m.account,
    links: [
      { href: `${API}/v2/payments/captures/${m.reference}`, rel: "self", method: "GET" },
      { href: `${API}/v2/payments/captures/${m.reference}/refund`, rel: "refund", method: "POST" },
      { href: `${API}/v2/checkout/orders/${orderOf(m)}`, rel: "up", method: "GET" },
    ],
    id: m.reference,
    status: "COMPLETED",
  };
}

function event(r: Random, m: SimMovement, type: string, resourceType: string, summary: string, resource: object) {
  return paypalEvent(type, resourceType, resource, m.created, { id: eventId(r), summary });
}

function completed(m: SimMovement, r: Random) {
  const { value, currency_code } = money(m.amount, m.currency);
  return event(
    r,
    m,
    "PAYMENT.CAPTURE.COMPLETED",
    "capture",
    `Payment completed for ${value} ${currency_code}`,
    captureResource(m),
  );
}

function orderCompleted(m: SimMovement, r: Random) {
  const { value, currency_code } = money(m.amount, m.currency);
  const order = {
    id: orderOf(m),
    intent: "CAPTURE",
    status: "COMPLETED",
    purchase_units: [
      {
        reference_id: "default",
        amount: money(m.amount, m.currency),
        custom_id: m.account,
        payments: { captures: [captureResource(m)] },
      },
    ],
    create_time: isoSeconds(m.created - 40),
    update_time: isoSeconds(m.created),
    links: [{ href: `${API}/v2/checkout/orders/${orderOf(m)}`, rel: "self", method: "GET" }],
  };
  return event(
    r,
    m,
    "CHECKOUT.ORDER.COMPLETED",
    "checkout-order",
    `Checkout Order Completed for ${value} ${currency_code}`,
    order,
  );
}

/** The refund as PayPal shows it, in a webhook's resource and from GET /v2/payments/refunds/{id}. */
export function refundResource(m: SimMovement) {
  return refundObject({
    id: m.reference,
    captureId: m.paymentReference ?? "",
    amount: m.amount,
    currency: m.currency,
    created: m.created,
  });
}

type RefundObjectInput = {
  id: string;
  captureId: string;
  amount: number;
  currency: string;
  created: number;
  fee?: number;
};

/**
 * A refund object (Payments v2): a refund's, and a reversal's. `fee`, when given, is the
 * part of the capture's fee PayPal gave back with it (seller_payable_breakdown).
 */
function refundObject(o: RefundObjectInput) {
  return {
    seller_payable_breakdown: {
      gross_amount: money(o.amount, o.currency),
      ...(o.fee !== undefined && {
        paypal_fee: money(o.fee, o.currency),
        net_amount: money(o.amount - o.fee, o.currency),
      }),
      total_refunded_amount: money(o.amount, o.currency),
    },
    amount: money(o.amount, o.currency),
    update_time: isoSeconds(o.created),
    create_time: isoSeconds(o.created),
    links: [
      { href: `${API}/v2/payments/refunds/${o.id}`, rel: "self", method: "GET" },
      { href: `${API}/v2/payments/captures/${o.captureId}`, rel: "up", method: "GET" },
    ],
    id: o.id,
    status: "COMPLETED",
  };
}

function refunded(m: SimMovement, r: Random) {
  const { value, currency_code } = money(m.amount, m.currency);
  const resource = refundResource(m);
  return event(
    r,
    m,
    "PAYMENT.CAPTURE.REFUNDED",
    "refund",
    `A ${value} ${currency_code} capture payment was refunded`,
    resource,
  );
}

export const paypalScript: ProviderScript = {
  provider: "paypal",
  refunds: true,
  money: (r) => drawMoney(r, MIX),
  paymentReference: paypalId,
  refundReference: paypalId,
  refundAmount: cappedRefund,
  secondTypeOf: "PAYMENT",
  // A capture's webhook carries PayPal's fee (./parse.ts posts it as <capture id>:fee).
  carried: (m) =>
    m.kind === "PAYMENT"
      ? [{ reference: `${m.reference}:fee`, kind: "FEE", amount: paypalFee(m.amount), currency: m.currency }]
      : [],
  events(m, r, secondType) {
    if (m.kind === "REFUND") return [refunded(m, r)];
    return secondType ? [completed(m, r), orderCompleted(m, r)] : [completed(m, r)];
  },
  reformat: (body) => reshape(body, { reverseKeys: true }),
  ignored(r, created) {
    const type = r.pick(["CHECKOUT.ORDER.APPROVED", "PAYMENT.CAPTURE.PENDING", "CUSTOMER.DISPUTE.CREATED"] as const);
    const [currency, minor] = drawMoney(r, MIX);
    const at = { created, reference: paypalId(r) } as SimMovement;
    const resource =
      type === "PAYMENT.CAPTURE.PENDING"
        ? {
            id: at.reference,
            amount: money(minor, currency),
            status: "PENDING",
            status_details: { reason: "PENDING_REVIEW" },
            create_time: isoSeconds(created),
            update_time: isoSeconds(created),
          }
        : type === "CHECKOUT.ORDER.APPROVED"
          ? {
              id: orderOf(at),
              intent: "CAPTURE",
              status: "APPROVED",
              purchase_units: [{ reference_id: "default", amount: money(minor, currency) }],
              create_time: isoSeconds(created),
            }
          : {
              dispute_id: `PP-D-${r.int(10_000, 99_999)}`,
              create_time: isoSeconds(created),
              reason: "MERCHANDISE_OR_SERVICE_NOT_RECEIVED",
              status: "OPEN",
              dispute_amount: money(minor, currency),
            };
    return {
      id: eventId(r),
      event_version: "1.0",
      create_time: isoMillis(created),
      resource_type:
        type === "CUSTOMER.DISPUTE.CREATED"
          ? "dispute"
          : type === "PAYMENT.CAPTURE.PENDING"
            ? "capture"
            : "checkout-order",
      event_type: type,
      summary: "Event that moves no money",
      resource,
    };
  },
  malformed(r, created) {
    return r.pick([
      '{"id":"WH-1","event_type":"PAYMENT.CAPTURE.COMPLETED","resource":{"amount":{"value":"10',
      `{"id":"${eventId(r)}","event_type":"PAYMENT.CAPTURE.COMPLETED","create_time":"${isoMillis(created)}","resource":{"id":"${chars(r, 17)}","amount":{"currency_code":"USD","value":"10.505"},"status":"COMPLETED"}}`,
    ]);
  },
};

/** A movement of a dispute on a party's balance, as the Disputes API lists it (money_movements / fund_movements). */
export type PaypalFundMovement = {
  party?: "SELLER" | "BUYER" | "PAYMENT_PROCESSOR";
  type: "DEBIT" | "CREDIT";
  reason: "DISPUTE_SETTLEMENT" | "DISPUTE_SETTLEMENT_FEE" | "DISPUTE_FEE" | "CHARGEBACK_FEE";
  /** Minor units, positive: the direction is `type`. */
  amount: number;
  currency: string;
  /** Unix seconds. */
  at: number;
};

/**
 * A dispute as PayPal's Disputes API shows it (GET /v1/customer/disputes/{id}, and the
 * resource of CUSTOMER.DISPUTE.*): its disputed capture, its stage and outcome, and the
 * movements it made on the parties' balances, in the deprecated money_movements shape
 * (affected_party) or its successor fund_movements (party).
 */
export function paypalDisputeResource(d: {
  id: string;
  captureId: string;
  amount: number;
  currency: string;
  created: number;
  status?: string;
  outcome?: string;
  movements?: PaypalFundMovement[];
  shape?: "money_movements" | "fund_movements";
}) {
  const listed = (d.movements ?? []).map((m) => ({
    [d.shape === "fund_movements" ? "party" : "affected_party"]: m.party ?? "SELLER",
    amount: money(m.amount, m.currency),
    initiated_time: isoSeconds(m.at),
    type: m.type,
    reason: m.reason,
  }));
  return {
    dispute_id: d.id,
    create_time: isoSeconds(d.created),
    update_time: isoSeconds(Math.max(d.created, ...(d.movements ?? []).map((m) => m.at))),
    disputed_transactions: [
      {
        seller_transaction_id: d.captureId,
        seller: { merchant_id: "RD465XN5VS364", name: "Tally Test Store" },
        items: [],
        seller_protection_eligible: true,
      },
    ],
    reason: "UNAUTHORISED",
    status: d.status ?? "OPEN",
    dispute_amount: money(d.amount, d.currency),
    ...(d.outcome && { dispute_outcome: { outcome_code: d.outcome } }),
    dispute_life_cycle_stage: "CHARGEBACK",
    dispute_channel: "EXTERNAL",
    [d.shape ?? "money_movements"]: listed,
    links: [{ href: `${API}/v1/customer/disputes/${d.id}`, rel: "self", method: "GET" }],
  };
}

/**
 * A reversal of a capture (the resource of PAYMENT.CAPTURE.REVERSED, a refund object,
 * and GET /v2/payments/refunds/{id}); `fee` is the part of the capture's fee PayPal gave back.
 */
export function paypalReversalResource(o: RefundObjectInput) {
  return { ...refundObject({ ...o, fee: o.fee ?? 0 }), note_to_payer: "Payment reversed" };
}

/**
 * A webhook event around a resource, as PayPal sends it, created 2 s after it. Its id
 * is drawn by the day generator, else made from the event's content (tests).
 */
export function paypalEvent(
  type: string,
  resourceType: string,
  resource: object,
  created: number,
  o: { id?: string; summary?: string } = {},
) {
  const id =
    o.id ??
    `WH-${createHash("sha256")
      .update(`${type}${JSON.stringify(resource)}`)
      .digest("hex")
      .slice(0, 17)
      .toUpperCase()}`;
  return {
    id,
    event_version: "1.0",
    create_time: isoMillis(created + 2),
    resource_type: resourceType,
    resource_version: "2.0",
    event_type: type,
    summary: o.summary ?? `${type} (simulated)`,
    resource,
    links: [{ href: `${API}/v1/notifications/webhooks-events/${id}`, rel: "self", method: "GET" }],
  };
}
