// Signs deliveries at send time, as each provider does, with the tenant's secrets:
// Stripe and Standard Webhooks with their own npm packages, Adyen's items with
// @adyen/api-library's hmacValidator, Paystack's HMAC-SHA512 and PayPal's RSA with
// node:crypto (and zlib's CRC-32), Flutterwave's verif-hash verbatim. None of it
// is Tally's own verifier code, so a shared misreading cannot make both agree.
import { randomUUID, createHmac, sign } from "node:crypto";
import { crc32 } from "node:zlib";
import { hmacValidator } from "@adyen/api-library";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import type { Delivery } from "@/dev/simulator/day";
import type { PaypalSigning } from "@/dev/simulator/paypal-certificate";
import type { SimProvider } from "@/lib/providers/simulation/script";

/**
 * A tenant's secret per provider: the signing secret (Stripe, Standard Webhooks),
 * the hex HMAC key (Adyen), the secret key sk_… (Paystack), the secret hash
 * (Flutterwave), and for PayPal the webhook id its signatures are bound to.
 */
export type TenantSecrets = Partial<Record<SimProvider, string>>;

export type SendOptions = { now?: Date /** Needed for PayPal deliveries. */; paypal?: PaypalSigning };

/** Keys that are not the tenant's, for the deliveries the day signs badly on purpose. */
const NOT_THE_TENANTS: Record<SimProvider, string> = {
  stripe: "whsec_not_the_tenants_secret",
  standard: `whsec_${Buffer.from("not the tenant's secret").toString("base64")}`,
  adyen: "0B".repeat(32),
  paystack: "sk_test_not_the_tenants_secret_key",
  flutterwave: "not-the-tenants-secret-hash",
  paypal: "WH-NOT-THIS-ENDPOINTS-WEBHOOK",
};

const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** The headers and bytes to POST. Adyen's signatures live inside the body, so the body may change; every other provider's is sent as is. */
export function signedDelivery(
  d: Pick<Delivery, "provider" | "body" | "signature" | "messageId">,
  secrets: TenantSecrets,
  o: SendOptions = {},
): { headers: Record<string, string>; body: string } {
  const now = o.now ?? new Date();
  const secret = secrets[d.provider];
  if (secret === undefined) throw new Error(`no ${d.provider} secret for this tenant`);
  const key = d.signature === "valid" ? secret : NOT_THE_TENANTS[d.provider];
  const headers: Record<string, string> = { "content-type": "application/json" };
  let body = d.body;
  switch (d.provider) {
    case "stripe":
      headers["stripe-signature"] = Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: key,
        timestamp: Math.floor(now.getTime() / 1000),
      });
      break;
    case "standard":
      headers["webhook-id"] = d.messageId;
      headers["webhook-timestamp"] = String(Math.floor(now.getTime() / 1000));
      headers["webhook-signature"] = new Webhook(key).sign(d.messageId, now, body);
      break;
    case "adyen":
      body = signAdyenItems(body, key);
      break;
    case "paystack":
      headers["x-paystack-signature"] = createHmac("sha512", key).update(body).digest("hex");
      break;
    case "flutterwave":
      headers["verif-hash"] = key;
      break;
    case "paypal": {
      if (!o.paypal) throw new Error("a PayPal delivery needs the simulator's PayPal signing key and certificate URL");
      // A transmission id per attempt, as PayPal sends; the time is signed, so it is now.
      const id = randomUUID();
      const time = isoSeconds(now);
      headers["paypal-transmission-id"] = id;
      headers["paypal-transmission-time"] = time;
      headers["paypal-transmission-sig"] = sign(
        "sha256",
        Buffer.from(`${id}|${time}|${key}|${crc32(Buffer.from(body, "utf8"))}`),
        o.paypal.privateKey,
      ).toString("base64");
      headers["paypal-cert-url"] = o.paypal.certUrl;
      headers["paypal-auth-algo"] = "SHA256withRSA";
      break;
    }
  }
  return { headers, body };
}

/** Headers alone, for providers that sign the bytes as they are (all but Adyen). */
export function signedHeaders(
  d: Pick<Delivery, "provider" | "body" | "signature" | "messageId">,
  secrets: TenantSecrets,
  now = new Date(),
): Record<string, string> {
  if (d.provider === "adyen") throw new Error("Adyen signs inside the body: use signedDelivery");
  return signedDelivery(d, secrets, { now }).headers;
}

/** Each NotificationRequestItem gets additionalData.hmacSignature; the rest of the JSON keeps its key order. */
function signAdyenItems(body: string, hexKey: string): string {
  let batch: { notificationItems?: { NotificationRequestItem?: Record<string, unknown> }[] };
  try {
    batch = JSON.parse(body);
  } catch {
    return body;
  }
  for (const wrapper of batch.notificationItems ?? []) {
    const item = wrapper.NotificationRequestItem;
    if (!item) continue;
    const additionalData = { ...(item.additionalData as Record<string, unknown> | undefined) };
    delete additionalData.hmacSignature;
    const hmacSignature = new hmacValidator().calculateHmac({ ...item, additionalData } as never, hexKey);
    item.additionalData = { ...additionalData, hmacSignature };
  }
  return JSON.stringify(batch);
}
