// Standard Webhooks (Svix and others): webhook-id / webhook-timestamp / webhook-signature
// (or their svix-* names); HMAC-SHA256, base64, over "<id>.<timestamp>.<raw body>",
// keyed with the base64-decoded secret after "whsec_"; "v1,<sig>" list, space-separated.
import { decodeBase64, hmac, safeEqual, skewBeyond } from "@/lib/providers/signature";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const STANDARD_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature", "svix-id", "svix-timestamp", "svix-signature"] as const;

function header(headers: Headers, name: "id" | "timestamp" | "signature"): string | null {
  return headers.get(`webhook-${name}`) ?? headers.get(`svix-${name}`);
}

/** The signing key: base64 after the whsec_ prefix (a bare base64 secret is accepted too). */
export function standardKey(secret: string): Buffer | null {
  return decodeBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
}

export function verifyStandard({ rawBody, headers, secrets, toleranceSeconds, now }: VerifyInput): VerifyResult {
  const id = header(headers, "id");
  const timestampText = header(headers, "timestamp");
  const signatureHeader = header(headers, "signature");
  const missing = [!id && "webhook-id", !timestampText && "webhook-timestamp", !signatureHeader && "webhook-signature"].filter(Boolean);
  if (missing.length > 0 || !id || !timestampText || !signatureHeader) {
    return { ok: false, reason: "missing_header", message: `Missing ${missing.join(", ")} header${missing.length > 1 ? "s" : ""} (or the svix-* equivalents)` };
  }
  if (!/^\d+$/.test(timestampText)) return { ok: false, reason: "malformed_header", message: "webhook-timestamp is not a unix timestamp in seconds" };
  const signatures = signatureHeader
    .split(" ")
    .map((entry) => entry.split(","))
    .filter(([version, value]) => version === "v1" && value)
    .map(([, value]) => decodeBase64(value!))
    .filter((sig): sig is Buffer => sig !== null);
  if (signatures.length === 0) return { ok: false, reason: "malformed_header", message: "webhook-signature has no v1 signature" };
  const timestamp = Number(timestampText);
  const skew = skewBeyond(timestamp, now, toleranceSeconds);
  if (skew !== null) {
    return { ok: false, reason: "timestamp_outside_tolerance", message: `webhook-timestamp is ${Math.abs(skew)} s ${skew > 0 ? "old" : "in the future"}, outside the ${toleranceSeconds} s tolerance` };
  }
  if (secrets.length === 0) return { ok: false, reason: "no_active_secret", message: "No active signing secret is configured for this endpoint" };
  for (const secret of secrets) {
    const key = standardKey(secret);
    if (!key) continue;
    const expected = hmac("sha256", key, `${id}.${timestampText}.`, rawBody);
    if (signatures.some((sig) => safeEqual(sig, expected))) return { ok: true, deliveryId: id };
  }
  return { ok: false, reason: "no_signature_matched", message: "No webhook-signature v1 signature matched an active secret for this endpoint" };
}
