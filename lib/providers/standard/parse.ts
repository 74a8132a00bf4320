// Standard Webhooks carry whatever the sender puts in them; Tally reads this shape:
//
//   { "type": "payment.succeeded" | "refund.succeeded" | <anything else: ignored>,
//     "timestamp": "<ISO 8601>",
//     "data": { "id": "<the sender's reference for the movement>",
//               "amount": <minor units>, "currency": "<ISO 4217>",
//               "account": "<customer account>",
//               "payment_id": "<refunds: the payment refunded>",
//               "created_at": "<ISO 8601 or unix seconds>" } }
//
// Reference = data.id. Account = data.account; a refund without one takes the
// account of data.payment_id's payment; a payment without one is unallocated.
//
// occurredAt, and why it does not depend on arrival order: data.created_at. Only
// payment.succeeded posts a payment and refund.succeeded a refund, one event type
// each, and a Standard Webhooks retry resends the same body (same webhook-id), so
// every delivery carries the same created_at. The top-level timestamp is a fallback
// for senders that omit created_at; it is the event's creation time, the same in the
// retries of one event, but a sender that announced one movement in two separately
// created events without created_at would post the first one's: such senders should
// send created_at.
import { z } from "zod";
import {
  currencyCode,
  describeZodError,
  minorUnitsOrZero,
  optionalText,
  parseJson,
  requiredText,
  timestamp,
} from "@/lib/providers/fields";
import type { ParseResult } from "@/lib/providers/types";

const MONEY_TYPES = { "payment.succeeded": "PAYMENT", "refund.succeeded": "REFUND" } as const;

const envelope = z.object({
  type: z.string().min(1),
  timestamp: timestamp.optional(),
  data: z.record(z.string(), z.unknown()),
});

const movement = z.object({
  id: requiredText,
  // Zero is possible in a sender-defined payload (and ignored below); negative never.
  amount: minorUnitsOrZero,
  currency: currencyCode,
  account: optionalText,
  payment_id: optionalText,
  created_at: timestamp.optional(),
});

export function parseStandard(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a Standard Webhooks event: ${describeZodError(env.error)}` };
  const { type, data } = env.data;
  const kind = MONEY_TYPES[type as keyof typeof MONEY_TYPES];
  if (!kind) return { kind: "ignored", eventType: type, reason: "event type moves no money" };
  const m = movement.safeParse(data);
  if (!m.success) return { kind: "failed", error: `${type}: ${describeZodError(m.error)}` };
  const occurredAt = m.data.created_at ?? env.data.timestamp;
  if (!occurredAt) return { kind: "failed", error: `${type}: data.created_at: missing, and no top-level timestamp` };
  if (m.data.amount === 0n) return { kind: "ignored", eventType: type, reason: "zero amount" };
  return {
    kind: "money",
    eventType: type,
    movements: [
      {
        kind,
        reference: m.data.id,
        account: m.data.account ?? null,
        paymentReference: m.data.payment_id,
        amount: m.data.amount,
        currency: m.data.currency,
        occurredAt,
        description: `${kind === "PAYMENT" ? "Payment" : "Refund"} ${m.data.id}`,
      },
    ],
  };
}
