// PayPal (Orders v2 / Payments v2 / Disputes v1) events to money movements.
//
// | event type                 | movement(s)      | reference                      | amount                                   |
// |----------------------------|------------------|--------------------------------|------------------------------------------|
// | PAYMENT.CAPTURE.COMPLETED  | PAYMENT          | resource.id (capture id)       | resource.amount.value, major units       |
// |                            | FEE, when > 0    | <capture id>:fee               | seller_receivable_breakdown.paypal_fee   |
// | PAYMENT.CAPTURE.REFUNDED   | REFUND           | resource.id (refund id)        | resource.amount.value                    |
// |                            | FEE, negative    | <refund id>:fee                | seller_payable_breakdown.paypal_fee      |
// |                            |   when > 0       |                                |   (the part of the fee PayPal gave back) |
// | PAYMENT.CAPTURE.REVERSED   | DISPUTE          | <capture id>:reversed          | resource.amount.value                    |
// |                            | FEE, negative    | <reversal id>:fee              | seller_payable_breakdown.paypal_fee      |
// | CUSTOMER.DISPUTE.CREATED,  | per movement of  |                                |                                          |
// |   .UPDATED, .RESOLVED      | the seller's     |                                |                                          |
// |                            | balance listed:  |                                |                                          |
// |   DISPUTE_SETTLEMENT DEBIT | DISPUTE          | <capture id>:reversed          | the movement's amount                    |
// |   DISPUTE_SETTLEMENT CREDIT| DISPUTE_REVERSAL | <capture id>:reinstated        | the movement's amount                    |
// |   DISPUTE_FEE,             | FEE (CREDIT:     | <dispute id>:<reason>          | the movement's amount                    |
// |   CHARGEBACK_FEE,          |   negative, the  |   [:returned][#n]              |                                          |
// |   DISPUTE_SETTLEMENT_FEE   |   fee given back)|                                |                                          |
// | anything else              | ignored          |                                |                                          |
//
// Captures and refunds. A refund's paymentReference is the capture it refunds: the last
// path segment of its `up` link (…/v2/payments/captures/{capture id}), the key its payment
// posted under. Account: resource.custom_id, else resource.invoice_id (what the merchant
// set on the purchase unit); a refund with neither takes its payment's account.
// occurredAt: resource.create_time (fixed, unlike update_time), else the event's.
// A resource whose status is present and not COMPLETED (a pending refund) is ignored.
//
// Fees. PayPal's capture carries seller_receivable_breakdown {gross_amount, paypal_fee,
// net_amount}: paypal_fee is what PayPal kept, "in the currency of the transaction"
// (Payments v2 reference). It posts as a FEE keyed <capture id>:fee, the key
// reconciliation compares a line's fee under, so a retry is one claim and a retry whose
// fee changed is a conflict for a person. A refund's seller_payable_breakdown.paypal_fee
// is the part of that fee PayPal returned with the refund (net_amount = gross − fee is
// what left the balance): a negative FEE keyed <refund id>:fee. A fee that is negative,
// larger than its gross, or in another currency fails the event, naming the field.
//
// Disputes. PayPal moves a disputed capture's money with a reversal of the capture
// (PAYMENT.CAPTURE.REVERSED, whose resource is a refund object), and its dispute object
// (Disputes API v1, the resource of CUSTOMER.DISPUTE.*) lists the movements it made on
// each party's balance: money_movements (deprecated) and fund_movements (its successor),
// each {affected_party | party, amount, initiated_time, type DEBIT|CREDIT, reason}, the
// reason one of DISPUTE_SETTLEMENT, DISPUTE_SETTLEMENT_FEE, DISPUTE_FEE, CHARGEBACK_FEE
// (the money_movement_reason enum). Only the seller's (SELLER) movements are ours; a
// dispute listing none has moved nothing of ours yet and is ignored, so CREATED at the
// inquiry stage posts nothing, and a dispute the seller wins without a debit posts
// nothing either. fund_movements is read when present and not empty, else money_movements.
//
// Why one key for two messages. The money a dispute settles against the seller is the
// capture's reversal, and PayPal tells it twice: PAYMENT.CAPTURE.REVERSED and the
// dispute's DISPUTE_SETTLEMENT DEBIT. Both post DISPUTE under <capture id>:reversed, so
// whichever arrives first claims it and the other is its duplicate (or, if their
// amounts differ, a conflict a person decides): never withdrawn twice. The money given
// back when the seller wins after a reversal, a DISPUTE_SETTLEMENT CREDIT, is
// <capture id>:reinstated. The capture is the dispute's one disputed transaction
// (seller_transaction_id); a settlement over several transactions fails rather than
// guess how it splits. A dispute that also ends in a refund of the same capture cannot
// take more than the capture: the worker holds a refund or dispute that would bring a
// payment's refunds and disputes past its amount (lib/pipeline/commit.ts).
// A dispute's fees are keyed by the dispute, the reason and the direction, with #n for
// the nth movement of that kind in the list: the list only grows from one event of the
// dispute to the next, so each movement keeps its key in every later event and retry.
//
// Trust. PayPal signs a CRC-32 of the body, which anyone can match: every movement here
// is confirmed with PayPal's API before it posts (./confirm.ts): a capture or refund by
// its id, the others by lookupId, the path of the resource they were read from
// (captures/…, refunds/… or disputes/…), which confirm reads from PayPal through the
// same mapping, posting PayPal's copy.
//
// Why occurredAt does not depend on arrival order: only PAYMENT.CAPTURE.COMPLETED posts a
// payment (CHECKOUT.ORDER.COMPLETED, the order around the same capture, is ignored), only
// PAYMENT.CAPTURE.REFUNDED a refund, and resource.create_time is the capture's (refund's,
// reversal's) creation, the same in every retry; a dispute's movement is dated by its
// initiated_time, the same in every event that lists it. The event's create_time is only
// a fallback for a resource without one, which PayPal does not send.
import { z } from "zod";
import {
  currencyCode,
  decimalAmount,
  decimalMinorUnits,
  describeZodError,
  optionalText,
  optionalTimestamp,
  parseJson,
  requiredText,
} from "@/lib/providers/fields";
import type { Movement, ParseResult } from "@/lib/providers/types";

/** Movements read from one PayPal resource (a webhook's, or the API's: ./confirm.ts). */
export type Mapped = { ok: true; movements: Movement[] } | { ok: false; error: string };

const envelope = z.object({
  event_type: z.string().min(1),
  create_time: optionalTimestamp,
  resource: z.record(z.string(), z.unknown()),
});

const money = z.object({ value: decimalAmount, currency_code: currencyCode });
const links = z.array(z.object({ href: z.string(), rel: z.string() })).nullish();

/** A capture, a refund or a reversal (Payments v2). */
const paymentResource = z.object({
  id: requiredText,
  status: optionalText,
  amount: money,
  custom_id: optionalText,
  invoice_id: optionalText,
  create_time: optionalTimestamp,
  links,
  seller_receivable_breakdown: z.object({ paypal_fee: money.nullish() }).nullish(),
  seller_payable_breakdown: z.object({ paypal_fee: money.nullish() }).nullish(),
});
type PaymentResource = z.infer<typeof paymentResource>;

const fundMovement = z.object({
  affected_party: optionalText,
  party: optionalText,
  amount: money,
  initiated_time: optionalTimestamp,
  type: optionalText,
  reason: optionalText,
});

const disputeResource = z.object({
  dispute_id: requiredText,
  status: optionalText,
  create_time: optionalTimestamp,
  update_time: optionalTimestamp,
  disputed_transactions: z.array(z.object({ seller_transaction_id: optionalText })).nullish(),
  money_movements: z.array(fundMovement).nullish(),
  fund_movements: z.array(fundMovement).nullish(),
  dispute_outcome: z.object({ outcome_code: optionalText }).nullish(),
});

const FEE_REASONS = new Set(["DISPUTE_FEE", "CHARGEBACK_FEE", "DISPUTE_SETTLEMENT_FEE"]);

export const paypalReversalReference = (captureId: string) => `${captureId}:reversed`;
export const paypalReinstatementReference = (captureId: string) => `${captureId}:reinstated`;

function upLinkId(l: z.infer<typeof links>): string | undefined {
  const href = l?.find((x) => x.rel === "up")?.href;
  if (!href) return undefined;
  try {
    return new URL(href).pathname.split("/").filter(Boolean).at(-1);
  } catch {
    return undefined;
  }
}

/** A capture, refund or reversal with its amount in minor units and the time it happened. */
function readDated(
  resource: unknown,
  fallback: Date | undefined,
): { ok: true; res: PaymentResource; amount: bigint; occurredAt: Date } | { ok: false; error: string } {
  const r = paymentResource.safeParse(resource);
  if (!r.success) return { ok: false, error: describeZodError(r.error) };
  const res = r.data;
  const amount = decimalMinorUnits(res.amount.value, res.amount.currency_code);
  if (!amount.ok) return { ok: false, error: `resource.amount.value: ${amount.error}` };
  const occurredAt = res.create_time ?? fallback;
  if (!occurredAt) return { ok: false, error: "resource.create_time: missing, and no event create_time" };
  return { ok: true, res, amount: amount.value, occurredAt };
}

/** The breakdown's paypal_fee in minor units: zero when absent; refused when it cannot be part of `gross`. */
function feeOf(
  fee: { value: string; currency_code: string } | null | undefined,
  field: string,
  gross: bigint,
  currency: string,
): { ok: true; value: bigint } | { ok: false; error: string } {
  if (!fee) return { ok: true, value: 0n };
  if (fee.currency_code !== currency)
    return {
      ok: false,
      error: `${field}: in ${fee.currency_code}, the amount in ${currency}; PayPal states the fee in the transaction's currency, so this is not guessed at`,
    };
  const minor = decimalMinorUnits(fee.value, fee.currency_code, "allowed");
  if (!minor.ok) return { ok: false, error: `${field}.value: ${minor.error}` };
  if (minor.value > gross)
    return { ok: false, error: `${field}.value: ${minor.value} is more than the gross ${gross}; a fee is part of it` };
  return { ok: true, value: minor.value };
}

/** A capture: its PAYMENT, and the FEE PayPal kept of it. */
export function captureMovements(resource: unknown, fallback?: Date): Mapped {
  const read = readDated(resource, fallback);
  if (!read.ok) return read;
  const { res, amount, occurredAt } = read;
  const currency = res.amount.currency_code;
  const fee = feeOf(
    res.seller_receivable_breakdown?.paypal_fee,
    "seller_receivable_breakdown.paypal_fee",
    amount,
    currency,
  );
  if (!fee.ok) return fee;
  const movements: Movement[] = [
    {
      kind: "PAYMENT",
      reference: res.id,
      account: res.custom_id ?? res.invoice_id ?? null,
      amount: amount,
      currency,
      occurredAt,
      description: `PayPal capture ${res.id}`,
    },
  ];
  if (fee.value > 0n)
    movements.push({
      kind: "FEE",
      reference: `${res.id}:fee`,
      account: null,
      paymentReference: res.id,
      amount: fee.value,
      currency,
      occurredAt,
      description: `PayPal fee on capture ${res.id}`,
      lookupId: `captures/${res.id}`,
    });
  return { ok: true, movements };
}

/** The part of the capture's fee PayPal gave back with a refund or a reversal: a negative FEE. */
function returnedFee(res: PaymentResource, amount: bigint, occurredAt: Date, what: string): Mapped {
  const fee = feeOf(
    res.seller_payable_breakdown?.paypal_fee,
    "seller_payable_breakdown.paypal_fee",
    amount,
    res.amount.currency_code,
  );
  if (!fee.ok) return fee;
  if (fee.value === 0n) return { ok: true, movements: [] };
  return {
    ok: true,
    movements: [
      {
        kind: "FEE",
        reference: `${res.id}:fee`,
        account: null,
        paymentReference: res.id,
        amount: -fee.value,
        currency: res.amount.currency_code,
        occurredAt,
        description: `PayPal fee given back with ${what} ${res.id}`,
        lookupId: `refunds/${res.id}`,
      },
    ],
  };
}

/** A refund: its REFUND of the capture its `up` link names, and the fee PayPal gave back. */
export function refundMovements(resource: unknown, fallback?: Date): Mapped {
  const read = readDated(resource, fallback);
  if (!read.ok) return read;
  const { res, amount, occurredAt } = read;
  const paymentReference = upLinkId(res.links);
  const fee = returnedFee(res, amount, occurredAt, "refund");
  if (!fee.ok) return fee;
  return {
    ok: true,
    movements: [
      {
        kind: "REFUND",
        reference: res.id,
        account: res.custom_id ?? res.invoice_id ?? null,
        ...(paymentReference && { paymentReference }),
        amount: amount,
        currency: res.amount.currency_code,
        occurredAt,
        description: `PayPal refund ${res.id}${paymentReference ? ` of capture ${paymentReference}` : ""}`,
      },
      ...fee.movements,
    ],
  };
}

/** A reversal (PAYMENT.CAPTURE.REVERSED): the disputed capture's money withdrawn, and any fee given back. */
export function reversalMovements(resource: unknown, fallback?: Date): Mapped {
  const read = readDated(resource, fallback);
  if (!read.ok) return read;
  const { res, amount, occurredAt } = read;
  const capture = upLinkId(res.links);
  if (!capture)
    return {
      ok: false,
      error: "resource.links: no `up` link naming the reversed capture; its reversal cannot be keyed",
    };
  const fee = returnedFee(res, amount, occurredAt, "reversal");
  if (!fee.ok) return fee;
  return {
    ok: true,
    movements: [
      {
        kind: "DISPUTE",
        reference: paypalReversalReference(capture),
        account: null,
        paymentReference: capture,
        amount: amount,
        currency: res.amount.currency_code,
        occurredAt,
        description: `PayPal reversal ${res.id} of capture ${capture}`,
        lookupId: `refunds/${res.id}`,
      },
      ...fee.movements,
    ],
  };
}

/** The movements a dispute lists on the seller's balance (see the header). */
export function disputeMovements(resource: unknown, fallback?: Date): Mapped {
  const r = disputeResource.safeParse(resource);
  if (!r.success) return { ok: false, error: describeZodError(r.error) };
  const d = r.data;
  const listed = d.fund_movements?.length ? d.fund_movements : (d.money_movements ?? []);
  const field = d.fund_movements?.length ? "fund_movements" : "money_movements";
  const captures = [...new Set((d.disputed_transactions ?? []).flatMap((t) => t.seller_transaction_id ?? []))];
  const seen = new Map<string, number>();
  const movements: Movement[] = [];
  for (const [i, m] of listed.entries()) {
    const at = `${field}[${i}]`;
    const party = m.affected_party ?? m.party;
    if (party !== "SELLER") continue;
    const credit = m.type === "CREDIT";
    if (m.type !== "DEBIT" && !credit)
      return { ok: false, error: `${at}.type: ${JSON.stringify(m.type ?? null)} is neither DEBIT nor CREDIT` };
    const amount = decimalMinorUnits(m.amount.value, m.amount.currency_code, "allowed");
    if (!amount.ok) return { ok: false, error: `${at}.amount.value: ${amount.error}` };
    if (amount.value === 0n) continue;
    const occurredAt = m.initiated_time ?? d.update_time ?? d.create_time ?? fallback;
    if (!occurredAt) return { ok: false, error: `${at}.initiated_time: missing, and no update_time or create_time` };
    const currency = m.amount.currency_code;
    const lookupId = `disputes/${d.dispute_id}`;
    if (m.reason === "DISPUTE_SETTLEMENT") {
      if (captures.length !== 1)
        return {
          ok: false,
          error: `${at}: a settlement of a dispute over ${captures.length === 0 ? "no named transaction" : `${captures.length} transactions`} (disputed_transactions[].seller_transaction_id); not guessing which capture it takes`,
        };
      const capture = captures[0]!;
      movements.push({
        kind: credit ? "DISPUTE_REVERSAL" : "DISPUTE",
        reference: credit ? paypalReinstatementReference(capture) : paypalReversalReference(capture),
        account: null,
        paymentReference: capture,
        amount: amount.value,
        currency,
        occurredAt,
        description: `PayPal dispute ${d.dispute_id} on capture ${capture}: ${credit ? "money given back" : "money withdrawn"}`,
        lookupId,
      });
    } else if (m.reason !== undefined && FEE_REASONS.has(m.reason)) {
      const base = `${d.dispute_id}:${m.reason.toLowerCase()}${credit ? ":returned" : ""}`;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      movements.push({
        kind: "FEE",
        reference: n === 1 ? base : `${base}#${n}`,
        account: null,
        ...(captures.length === 1 && { paymentReference: captures[0] }),
        amount: credit ? -amount.value : amount.value,
        currency,
        occurredAt,
        description: `PayPal ${m.reason.toLowerCase().replaceAll("_", " ")} ${credit ? "given back" : "charged"} on dispute ${d.dispute_id}`,
        lookupId,
      });
    } else
      return {
        ok: false,
        error: `${at}.reason: ${JSON.stringify(m.reason ?? null)} is not one Tally knows (DISPUTE_SETTLEMENT, DISPUTE_SETTLEMENT_FEE, DISPUTE_FEE, CHARGEBACK_FEE); not guessing what moved`,
      };
  }
  return { ok: true, movements };
}

const EVENTS: Record<string, { map: (resource: unknown, fallback?: Date) => Mapped; noun: string }> = {
  "PAYMENT.CAPTURE.COMPLETED": { map: captureMovements, noun: "capture" },
  "PAYMENT.CAPTURE.REFUNDED": { map: refundMovements, noun: "refund" },
  "PAYMENT.CAPTURE.REVERSED": { map: reversalMovements, noun: "reversal" },
  "CUSTOMER.DISPUTE.CREATED": { map: disputeMovements, noun: "dispute" },
  "CUSTOMER.DISPUTE.UPDATED": { map: disputeMovements, noun: "dispute" },
  "CUSTOMER.DISPUTE.RESOLVED": { map: disputeMovements, noun: "dispute" },
};

export function parsePaypal(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a PayPal webhook event: ${describeZodError(env.error)}` };
  const { event_type: type, resource } = env.data;
  const mapping = EVENTS[type];
  if (!mapping) return { kind: "ignored", eventType: type, reason: "event type moves no money" };
  if (mapping.noun !== "dispute") {
    const status = optionalText.safeParse(resource.status);
    if (status.success && status.data !== undefined && status.data !== "COMPLETED")
      return { kind: "ignored", eventType: type, reason: `resource status is ${status.data}, not COMPLETED` };
  }
  const mapped = mapping.map(resource, env.data.create_time);
  if (!mapped.ok) return { kind: "failed", error: `${type}: ${mapped.error}` };
  // A capture, refund or reversal of zero moves nothing (its fee cannot be more than it).
  const movements = mapped.movements.filter((m) => m.amount !== 0n);
  if (movements.length === 0)
    return {
      kind: "ignored",
      eventType: type,
      reason:
        mapping.noun === "dispute" ? "the dispute lists no movement of the seller's balance (yet)" : "zero amount",
    };
  return { kind: "money", eventType: type, movements };
}
