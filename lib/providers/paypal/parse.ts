// PayPal (Orders v2 / Payments v2) events to money movements.
//
// | event type                 | movement | reference                  | amount                             |
// |----------------------------|----------|----------------------------|------------------------------------|
// | PAYMENT.CAPTURE.COMPLETED  | PAYMENT  | resource.id (capture id)   | resource.amount.value, major units |
// | PAYMENT.CAPTURE.REFUNDED   | REFUND   | resource.id (refund id)    | resource.amount.value, major units |
// | anything else              | ignored  |                            |                                    |
//
// A refund's paymentReference is the capture it refunds: the last path segment of
// its `up` link (…/v2/payments/captures/{capture id}), the key its payment posted
// under. Account: resource.custom_id, else resource.invoice_id (what the merchant
// set on the purchase unit); a refund with neither takes its payment's account.
// occurredAt: resource.create_time (fixed, unlike update_time), else the event's.
// A resource whose status is present and not COMPLETED (a pending refund) is ignored.
//
// Why occurredAt does not depend on arrival order: only PAYMENT.CAPTURE.COMPLETED posts a
// payment (CHECKOUT.ORDER.COMPLETED, the order around the same capture, is ignored)
// and only PAYMENT.CAPTURE.REFUNDED a refund, and resource.create_time is the
// capture's (refund's) creation, the same in every retry. The event's create_time is
// only a fallback for a resource without one, which PayPal does not send.
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
import type { ParseResult } from "@/lib/providers/types";

const MONEY_TYPES = { "PAYMENT.CAPTURE.COMPLETED": "PAYMENT", "PAYMENT.CAPTURE.REFUNDED": "REFUND" } as const;

const envelope = z.object({
  event_type: z.string().min(1),
  create_time: optionalTimestamp,
  resource: z.record(z.string(), z.unknown()),
});

const resource = z.object({
  id: requiredText,
  status: optionalText,
  amount: z.object({ value: decimalAmount, currency_code: currencyCode }),
  custom_id: optionalText,
  invoice_id: optionalText,
  create_time: optionalTimestamp,
  links: z.array(z.object({ href: z.string(), rel: z.string() })).nullish(),
});

function upLinkId(links: { href: string; rel: string }[] | null | undefined): string | undefined {
  const href = links?.find((l) => l.rel === "up")?.href;
  if (!href) return undefined;
  try {
    const segments = new URL(href).pathname.split("/").filter(Boolean);
    return segments.at(-1);
  } catch {
    return undefined;
  }
}

export function parsePaypal(rawBody: Buffer): ParseResult {
  const json = parseJson(rawBody);
  if (!json.ok) return { kind: "failed", error: json.error };
  const env = envelope.safeParse(json.value);
  if (!env.success) return { kind: "failed", error: `not a PayPal webhook event: ${describeZodError(env.error)}` };
  const { event_type: type } = env.data;
  const kind = MONEY_TYPES[type as keyof typeof MONEY_TYPES];
  if (!kind) return { kind: "ignored", eventType: type, reason: "event type moves no money" };
  const r = resource.safeParse(env.data.resource);
  if (!r.success) return { kind: "failed", error: `${type}: ${describeZodError(r.error)}` };
  const res = r.data;
  if (res.status !== undefined && res.status !== "COMPLETED")
    return { kind: "ignored", eventType: type, reason: `resource status is ${res.status}, not COMPLETED` };
  const amount = decimalMinorUnits(res.amount.value, res.amount.currency_code);
  if (!amount.ok) return { kind: "failed", error: `${type}: resource.amount.value: ${amount.error}` };
  const occurredAt = res.create_time ?? env.data.create_time;
  if (!occurredAt) return { kind: "failed", error: `${type}: resource.create_time: missing, and no event create_time` };
  const paymentReference = kind === "REFUND" ? upLinkId(res.links) : undefined;
  if (amount.value === 0n) return { kind: "ignored", eventType: type, reason: "zero amount" };
  return {
    kind: "money",
    eventType: type,
    movements: [
      {
        kind,
        reference: res.id,
        account: res.custom_id ?? res.invoice_id ?? null,
        ...(paymentReference && { paymentReference }),
        amount: amount.value,
        currency: res.amount.currency_code,
        occurredAt,
        description:
          kind === "PAYMENT"
            ? `PayPal capture ${res.id}`
            : `PayPal refund ${res.id}${paymentReference ? ` of capture ${paymentReference}` : ""}`,
      },
    ],
  };
}
