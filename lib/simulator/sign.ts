// Signs deliveries at send time with the providers' own npm packages, so what
// Tally verifies was produced by an implementation independent of its own.
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import type { Delivery } from "@/lib/simulator/day";

export type TenantSecrets = { stripe: string; standard: string };

export function signedHeaders(d: Pick<Delivery, "provider" | "body" | "signature" | "messageId">, secrets: TenantSecrets, now = new Date()): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  // A deliberately bad signature: made with a key that is not the tenant's.
  const secret = d.provider === "stripe" ? secrets.stripe : secrets.standard;
  const key = d.signature === "valid" ? secret : d.provider === "stripe" ? "whsec_not_the_tenants_secret" : "whsec_" + Buffer.from("not the tenant's secret").toString("base64");
  if (d.provider === "stripe") {
    headers["stripe-signature"] = Stripe.webhooks.generateTestHeaderString({ payload: d.body, secret: key, timestamp: Math.floor(now.getTime() / 1000) });
  } else {
    headers["webhook-id"] = d.messageId;
    headers["webhook-timestamp"] = String(Math.floor(now.getTime() / 1000));
    headers["webhook-signature"] = new Webhook(key).sign(d.messageId, now, d.body);
  }
  return headers;
}
