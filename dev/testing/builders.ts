// Test fixtures as builders: a tenant with secrets, provider events, and
// deliveries signed by the providers' own npm packages (an implementation
// independent of ours).
import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { addSecret, createTenant, generateSecret } from "@/lib/admin/tenants";

let counter = 0;
export const unique = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}${randomBytes(3).toString("hex")}`;

export type TestTenant = { id: string; slug: string; stripeSecret: string; standardSecret: string };

export async function aTenant(options: { slug?: string } = {}): Promise<TestTenant> {
  const slug = options.slug ?? unique("t-");
  const created = await createTenant({ slug, name: `Tenant ${slug}` }, SYSTEM_ACTOR);
  if (!created.ok) throw new Error(created.message);
  const stripeSecret = generateSecret("stripe");
  const standardSecret = generateSecret("standard");
  for (const [provider, secret] of [
    ["stripe", stripeSecret],
    ["standard", standardSecret],
  ] as const) {
    const r = await addSecret(slug, provider, secret, {}, SYSTEM_ACTOR);
    if (!r.ok) throw new Error(r.message);
  }
  return { id: created.value.id, slug, stripeSecret, standardSecret };
}

export type StripePaymentOptions = {
  reference?: string;
  amount?: bigint | number;
  currency?: string;
  account?: string | null;
  eventId?: string;
  created?: number;
};

/** A payment_intent.succeeded event. */
export function aStripePayment(o: StripePaymentOptions = {}) {
  const reference = o.reference ?? unique("pi_");
  const created = o.created ?? Math.floor(Date.now() / 1000);
  return {
    id: o.eventId ?? unique("evt_"),
    object: "event",
    type: "payment_intent.succeeded",
    created,
    livemode: false,
    data: {
      object: {
        id: reference,
        object: "payment_intent",
        amount: Number(o.amount ?? 1250),
        amount_received: Number(o.amount ?? 1250),
        currency: (o.currency ?? "usd").toLowerCase(),
        customer: null,
        metadata: o.account === null ? {} : { account: o.account ?? "acct_alice" },
        created,
        latest_charge: `ch_${reference.slice(3)}`,
      },
    },
  };
}

/** The same payment announced as charge.succeeded. */
export function aStripeChargeFor(payment: ReturnType<typeof aStripePayment>) {
  const pi = payment.data.object;
  return {
    id: unique("evt_"),
    object: "event",
    type: "charge.succeeded",
    created: payment.created,
    data: {
      object: {
        id: pi.latest_charge,
        object: "charge",
        payment_intent: pi.id,
        amount: pi.amount,
        amount_captured: pi.amount,
        captured: true,
        currency: pi.currency,
        customer: pi.customer,
        metadata: pi.metadata,
        created: pi.created,
      },
    },
  };
}

export function aStripeRefund(o: {
  reference?: string;
  payment: string;
  amount?: number;
  currency?: string;
  account?: string;
}) {
  const created = Math.floor(Date.now() / 1000);
  return {
    id: unique("evt_"),
    object: "event",
    type: "refund.created",
    created,
    data: {
      object: {
        id: o.reference ?? unique("re_"),
        object: "refund",
        amount: o.amount ?? 500,
        currency: o.currency ?? "usd",
        status: "succeeded",
        payment_intent: o.payment,
        charge: null,
        metadata: o.account ? { account: o.account } : {},
        created,
      },
    },
  };
}

export function stripeSignatureHeader(body: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
}

export function standardHeaders(
  body: string,
  secret: string,
  o: { id?: string; timestamp?: Date; prefix?: "webhook" | "svix" } = {},
): Record<string, string> {
  const id = o.id ?? unique("msg_");
  const at = o.timestamp ?? new Date();
  const p = o.prefix ?? "webhook";
  return {
    [`${p}-id`]: id,
    [`${p}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
    [`${p}-signature`]: new Webhook(secret).sign(id, at, body),
  };
}

export function aStandardPayment(
  o: { reference?: string; amount?: number | string; currency?: string; account?: string | null } = {},
) {
  return {
    type: "payment.succeeded",
    timestamp: new Date().toISOString(),
    data: {
      id: o.reference ?? unique("pay_"),
      amount: o.amount ?? 990,
      currency: o.currency ?? "EUR",
      account: o.account === undefined ? "acct_bob" : o.account,
      created_at: new Date().toISOString(),
    },
  };
}

export function webhookRequest(
  tenant: string,
  provider: string,
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
  method = "POST",
): Request {
  return new Request(`http://tally.test/api/webhooks/${tenant}/${provider}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: method === "GET" || method === "HEAD" ? undefined : body,
  });
}

export function stripeRequest(
  tenant: TestTenant,
  event: object | string,
  o: { secret?: string; timestamp?: number } = {},
): Request {
  const body = typeof event === "string" ? event : JSON.stringify(event);
  return webhookRequest(tenant.slug, "stripe", body, {
    "stripe-signature": stripeSignatureHeader(body, o.secret ?? tenant.stripeSecret, o.timestamp),
  });
}
