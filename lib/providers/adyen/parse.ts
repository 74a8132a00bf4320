// Adyen notification batches to money movements: one batch, any number of movements.
//
// | item (success = "true")  | movement | reference   | paymentReference  |
// |--------------------------|----------|-------------|-------------------|
// | AUTHORISATION            | PAYMENT  | pspReference |                  |
// | REFUND                   | REFUND   | pspReference | originalReference (the payment's pspReference) |
// | CHARGEBACK               | DISPUTE  | pspReference (the dispute's) | originalReference (the payment's) |
// | SECOND_CHARGEBACK        | DISPUTE  | pspReference + ":second" | originalReference |
// | CHARGEBACK_REVERSED      | DISPUTE_REVERSAL | pspReference + ":reinstated" | originalReference |
// | anything else, or failed | ignored  |             |                   |
//
// Disputes: every event of one dispute carries the dispute's own pspReference and the
// disputed payment's as originalReference (docs.adyen.com, dispute webhooks);
// CHARGEBACK takes the funds, CHARGEBACK_REVERSED gives them back, a SECOND_CHARGEBACK
// takes them again. NOTIFICATION_OF_CHARGEBACK, REQUEST_FOR_INFORMATION and the
// defence events move no money. The Settlement Details Report keys its Chargeback,
// ChargebackReversed and SecondChargeback records the same way (./report.ts).
//
// No webhook here moves fees, payouts or corrections: a record's fee, the batch's Fee,
// MiscCosts and PaymentCost (FEE), InvoiceDeduction, DepositCorrection and
// Balancetransfer (ADJUSTMENT) and its MerchantPayout (PAYOUT, keyed
// "<merchant account>:batch:<n>:<currency>") come from the Settlement Details Report
// and are posted from it (./report.ts; the adapter lists them as settlementOnly).
//
// AUTHORISATION credits the payment: this assumes the merchant account captures
// automatically (Adyen's default). CAPTURE items are ignored so a payment never
// posts twice; a manual-capture merchant needs a different mapping.
// Amount: amount.value, already minor units; currency amount.currency; occurredAt eventDate.
// Account: only from a field the item's HMAC covers (verify.ts signs pspReference,
// originalReference, merchantAccountCode, merchantReference, value, currency, eventCode,
// success). additionalData is not signed: "metadata.account" or shopperReference there
// can be rewritten without breaking the signature (issue #17: customer:acct_mallory was
// credited that way), so neither is read. The merchant puts the account in its
// merchantReference as "<account>/<order reference>"; the part before the first "/" is
// the account. A merchantReference without "/" names no account: unallocated (a refund
// takes its payment's account).
// A batch where no item moves money is ignored; one malformed money item fails the
// whole batch, kept for reprocessing, rather than posting part of it.
//
// occurredAt, and why it does not depend on arrival order: the item's eventDate. Only
// one item type posts each movement (AUTHORISATION a payment, REFUND a refund; CAPTURE,
// the second event Adyen sends for a payment, is ignored), and Adyen repeats an item
// with its original eventDate however often and in whatever batch it resends it, so
// every delivery that can post a movement carries the same date.
import { z } from "zod";
import {
  currencyCode,
  describeZodError,
  looseBoolean,
  minorUnitsOrZero,
  optionalText,
  parseJson,
  requiredText,
  timestamp,
} from "@/lib/providers/fields";
import type { Movement, ParseResult } from "@/lib/providers/types";

const MONEY_CODES = {
  AUTHORISATION: "PAYMENT",
  REFUND: "REFUND",
  CHARGEBACK: "DISPUTE",
  SECOND_CHARGEBACK: "DISPUTE",
  CHARGEBACK_REVERSED: "DISPUTE_REVERSAL",
} as const;

/** A dispute's second withdrawal and its reinstatement are movements of their own. */
const DISPUTE_SUFFIX: Record<string, string> = { SECOND_CHARGEBACK: ":second", CHARGEBACK_REVERSED: ":reinstated" };

const batch = z.object({
  notificationItems: z.array(z.object({ NotificationRequestItem: z.record(z.string(), z.unknown()) })).min(1),
});

const header = z.object({ eventCode: z.string().min(1), success: looseBoolean.optional() });

const moneyItem = z.object({
  pspReference: requiredText,
  originalReference: optionalText,
  merchantReference: optionalText,
  eventDate: timestamp,
  // Zero is real: a zero-value AUTHORISATION checks a card (ignored below).
  amount: z.object({ value: minorUnitsOrZero, currency: currencyCode }),
  additionalData: z
    .record(z.string(), z.unknown())
    .nullish()
    .transform((d) => d ?? {}),
});

/** The account in a signed merchantReference "<account>/<order reference>", else null. */
export function adyenAccount(merchantReference: string | undefined): string | null {
  const slash = merchantReference?.indexOf("/") ?? -1;
  if (!merchantReference || slash <= 0) return null;
  const account = merchantReference.slice(0, slash).trim();
  return account === "" ? null : account;
}

export function parseAdyen(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const b = batch.safeParse(json.value);
  if (!b.success) return { kind: "failed", error: `not an Adyen notification batch: ${describeZodError(b.error)}` };
  const items = b.data.notificationItems.map((w) => w.NotificationRequestItem);

  const codes: string[] = [];
  const movements: Movement[] = [];
  for (const [index, raw] of items.entries()) {
    const h = header.safeParse(raw);
    if (!h.success) return { kind: "failed", error: `notificationItems[${index}]: ${describeZodError(h.error)}` };
    const { eventCode, success } = h.data;
    if (!codes.includes(eventCode)) codes.push(eventCode);
    const kind = MONEY_CODES[eventCode as keyof typeof MONEY_CODES];
    if (!kind || success !== true) continue;
    const m = moneyItem.safeParse(raw);
    if (!m.success)
      return { kind: "failed", error: `notificationItems[${index}] ${eventCode}: ${describeZodError(m.error)}` };
    const item = m.data;
    if (item.amount.value === 0n) continue;
    if (kind !== "PAYMENT" && !item.originalReference)
      return {
        kind: "failed",
        error: `notificationItems[${index}] ${eventCode}: originalReference: missing (the ${kind === "REFUND" ? "refunded" : "disputed"} payment's pspReference)`,
      };
    const dispute = kind === "DISPUTE" || kind === "DISPUTE_REVERSAL";
    movements.push({
      kind,
      reference: `${item.pspReference}${DISPUTE_SUFFIX[eventCode] ?? ""}`,
      // A dispute moves the provider's money (disputes:adyen), not a customer's.
      account: dispute ? null : adyenAccount(item.merchantReference),
      ...(kind !== "PAYMENT" && { paymentReference: item.originalReference }),
      amount: item.amount.value,
      currency: item.amount.currency,
      occurredAt: item.eventDate,
      description:
        kind === "PAYMENT"
          ? `Adyen payment ${item.pspReference}`
          : kind === "REFUND"
            ? `Adyen refund ${item.pspReference} of ${item.originalReference}`
            : `Adyen ${eventCode.toLowerCase().replace("_", " ")} ${item.pspReference} of ${item.originalReference}`,
    });
  }
  const eventType = codes.join(",");
  if (movements.length === 0)
    return {
      kind: "ignored",
      eventType,
      reason: "no successful AUTHORISATION, REFUND or chargeback with an amount in the batch",
    };
  return { kind: "money", eventType, movements };
}
