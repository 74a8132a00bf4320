// Stripe-Signature: "t=<unix>,v1=<hex>[,v1=<hex>…]", HMAC-SHA256 over "<t>.<raw body>"
// keyed with the whole whsec_ string. Any v1 may match any active secret.
import { hmac, safeEqual, decodeHex, skewBeyond } from "@/lib/providers/signature";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const STRIPE_SIGNATURE_HEADER = "stripe-signature";

export function verifyStripe({ rawBody, headers, secrets, toleranceSeconds, now }: VerifyInput): VerifyResult {
  const header = headers.get(STRIPE_SIGNATURE_HEADER);
  if (!header) return { ok: false, reason: "missing_header", message: "Missing Stripe-Signature header" };
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
  if (timestamp === null) return { ok: false, reason: "malformed_header", message: "Stripe-Signature header has no timestamp (t=)" };
  if (signatures.length === 0) return { ok: false, reason: "malformed_header", message: "Stripe-Signature header has no v1 signature" };
  const skew = skewBeyond(timestamp, now, toleranceSeconds);
  if (skew !== null) {
    return { ok: false, reason: "timestamp_outside_tolerance", message: `Stripe-Signature timestamp is ${Math.abs(skew)} s ${skew > 0 ? "old" : "in the future"}, outside the ${toleranceSeconds} s tolerance` };
  }
  if (secrets.length === 0) return { ok: false, reason: "no_active_secret", message: "No active signing secret is configured for this endpoint" };
  const prefix = `${timestamp}.`;
  for (const secret of secrets) {
    const expected = hmac("sha256", secret, prefix, rawBody);
    if (signatures.some((sig) => safeEqual(sig, expected))) return { ok: true, deliveryId: null };
  }
  return { ok: false, reason: "no_signature_matched", message: "No Stripe-Signature v1 signature matched an active secret for this endpoint" };
}
