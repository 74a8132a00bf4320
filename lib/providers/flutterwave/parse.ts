// Flutterwave (v3) events to money movements.
//
// | event                                       | movement | reference     | amount                     |
// |---------------------------------------------|----------|---------------|----------------------------|
// | charge.completed with data.status successful | PAYMENT  | data.flw_ref  | data.amount, major units   |
// | anything else                               | ignored  |               |                            |
//
// Reference: flw_ref, Flutterwave's own reference for the transaction. tx_ref is the
// merchant's reference for the checkout and is shared by every attempt made under it
// (a failed card, then a successful transfer), so it does not name one movement;
// flw_ref does, is the same in every retry of the webhook, and is what the
// transactions and settlement APIs report per transaction. The numeric data.id goes
// in lookupId: it is what the verify API (confirm.ts) takes.
// Amount: data.amount, what the merchant charged (charged_amount adds fees passed
// to the customer), a major-unit decimal converted exactly by lib/money.
// Account: data.meta.account (or meta_data.account) when the merchant set it, else
// Flutterwave's customer id; else unallocated.
//
// occurredAt, and why it does not depend on arrival order: data.created_at. Only
// charge.completed with status successful posts (Flutterwave sends no second event
// type for a payment), and its retries resend the same data, so every delivery that
// can post the payment carries the same created_at.
import { z } from "zod";
import {
  currencyCode,
  decimalAmount,
  decimalMinorUnits,
  describeZodError,
  metadataAccount,
  optionalText,
  optionalTimestamp,
  parseJson,
  requiredText,
} from "@/lib/providers/fields";
import type { ParseResult } from "@/lib/providers/types";

const envelope = z.object({
  event: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

const charge = z.object({
  id: requiredText,
  flw_ref: requiredText,
  tx_ref: optionalText,
  amount: decimalAmount,
  currency: currencyCode,
  status: optionalText,
  created_at: optionalTimestamp,
  meta: z.unknown().optional(),
  meta_data: z.unknown().optional(),
  customer: z.object({ id: optionalText }).nullish(),
});

export function parseFlutterwave(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a Flutterwave v3 event: ${describeZodError(env.error)}` };
  const { event, data } = env.data;
  if (event !== "charge.completed") return { kind: "ignored", eventType: event, reason: "event type moves no money" };
  if (data.status !== "successful")
    return {
      kind: "ignored",
      eventType: event,
      reason: `charge status is ${String(data.status ?? "unknown")}, not successful`,
    };
  const c = charge.safeParse(data);
  if (!c.success) return { kind: "failed", error: `${event}: ${describeZodError(c.error)}` };
  const ch = c.data;
  const amount = decimalMinorUnits(ch.amount, ch.currency);
  if (!amount.ok) return { kind: "failed", error: `${event}: data.amount: ${amount.error}` };
  if (!ch.created_at) return { kind: "failed", error: `${event}: data.created_at: missing` };
  if (amount.value === 0n) return { kind: "ignored", eventType: event, reason: "zero amount" };
  return {
    kind: "money",
    eventType: event,
    movements: [
      {
        kind: "PAYMENT",
        reference: ch.flw_ref,
        account: metadataAccount(ch.meta) ?? metadataAccount(ch.meta_data) ?? ch.customer?.id ?? null,
        amount: amount.value,
        currency: ch.currency,
        occurredAt: ch.created_at,
        description: `Flutterwave payment ${ch.flw_ref}${ch.tx_ref ? ` (${ch.tx_ref})` : ""}`,
        lookupId: ch.id,
      },
    ],
  };
}
