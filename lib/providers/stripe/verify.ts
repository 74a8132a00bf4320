// Stripe-Signature: "t=<unix>,v1=<hex>[,v1=<hex>…]", HMAC-SHA256 over "<t>.<raw body>"
// keyed with the whole whsec_ string. Any v1 may match any active secret.
import { explainMissingHeader, peekJson, refuse } from "@/lib/providers/explain";
import { hmac, safeEqual, decodeHex } from "@/lib/providers/signature";
import { judgeTimestamped } from "@/lib/providers/verdict";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const STRIPE_SIGNATURE_HEADER = "stripe-signature";

export function verifyStripe(input: VerifyInput): VerifyResult {
  const { headers } = input;
  const header = headers.get(STRIPE_SIGNATURE_HEADER);
  if (!header)
    return refuse("missing_header", "Missing Stripe-Signature header", explainMissingHeader(headers, "stripe"));
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === "v1") {
      const sig = decodeHex(value);
      if (sig) signatures.push(sig);
    }
  }
  if (timestamp === null)
    return { ok: false, reason: "malformed_header", message: "Stripe-Signature header has no timestamp (t=)" };
  if (signatures.length === 0)
    return { ok: false, reason: "malformed_header", message: "Stripe-Signature header has no v1 signature" };
  const prefix = `${timestamp}.`;
  const verifies = (body: Buffer, secret: string) => {
    const expected = hmac("sha256", secret, prefix, body);
    return signatures.some((sig) => safeEqual(sig, expected));
  };
  return judgeTimestamped(
    input,
    { what: "Stripe-Signature timestamp", timestamp, verifies, deliveryId: null },
    "No Stripe-Signature v1 signature matched an active secret for this endpoint",
    {
      secretName: "signing secret",
      wrongKind: stripeWrongKind,
      modeNote: stripeModeNote(input.rawBody),
    },
  );
}

function stripeWrongKind(secret: string): string | null {
  const prefix = /^(sk|rk|pk)_(test|live)_/.exec(secret)?.[0];
  if (!prefix) return null;
  return `the configured secret starts with ${prefix}, which is a Stripe API key; a webhook signing secret starts with whsec_ (Dashboard > Developers > Webhooks > the endpoint > Signing secret)`;
}

function stripeModeNote(rawBody: Buffer): string | null {
  const event = peekJson(rawBody) as { livemode?: unknown } | undefined;
  if (typeof event?.livemode !== "boolean") return null;
  return `the signature was not made with the endpoint's signing secret. This event is ${event.livemode ? "live" : "test"}-mode (livemode: ${event.livemode}), and Stripe signs test and live endpoints with different whsec_ secrets: check the secret was copied from the ${event.livemode ? "live" : "test"}-mode endpoint (or the body was changed after signing)`;
}
