// Standard Webhooks (Svix and others): webhook-id / webhook-timestamp / webhook-signature
// (or their svix-* names); HMAC-SHA256, base64, over "<id>.<timestamp>.<raw body>",
// keyed with the base64-decoded secret after "whsec_"; "v1,<sig>" list, space-separated.
import { explainMissingHeader, refuse } from "@/lib/providers/explain";
import { decodeBase64, hmac, safeEqual } from "@/lib/providers/signature";
import { judgeTimestamped } from "@/lib/providers/verdict";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const STANDARD_HEADERS = [
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "svix-id",
  "svix-timestamp",
  "svix-signature",
] as const;

function header(headers: Headers, name: "id" | "timestamp" | "signature"): string | null {
  return headers.get(`webhook-${name}`) ?? headers.get(`svix-${name}`);
}

/** The signing key: base64 after the whsec_ prefix (a bare base64 secret is accepted too). */
export function standardKey(secret: string): Buffer | null {
  return decodeBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
}

export function verifyStandard(input: VerifyInput): VerifyResult {
  const { headers } = input;
  const id = header(headers, "id");
  const timestampText = header(headers, "timestamp");
  const signatureHeader = header(headers, "signature");
  const missing = [
    !id && "webhook-id",
    !timestampText && "webhook-timestamp",
    !signatureHeader && "webhook-signature",
  ].filter(Boolean);
  if (missing.length > 0 || !id || !timestampText || !signatureHeader) {
    return refuse(
      "missing_header",
      `Missing ${missing.join(", ")} header${missing.length > 1 ? "s" : ""} (or the svix-* equivalents)`,
      explainMissingHeader(headers, "standard"),
    );
  }
  if (!/^\d+$/.test(timestampText))
    return { ok: false, reason: "malformed_header", message: "webhook-timestamp is not a unix timestamp in seconds" };
  const signatures = signatureHeader
    .split(" ")
    .map((entry) => entry.split(","))
    .filter(([version, value]) => version === "v1" && value)
    .map(([, value]) => decodeBase64(value!))
    .filter((sig): sig is Buffer => sig !== null);
  if (signatures.length === 0)
    return { ok: false, reason: "malformed_header", message: "webhook-signature has no v1 signature" };
  const verifies = (body: Buffer, secret: string) => {
    const key = standardKey(secret);
    if (!key) return false;
    const expected = hmac("sha256", key, `${id}.${timestampText}.`, body);
    return signatures.some((sig) => safeEqual(sig, expected));
  };
  return judgeTimestamped(
    input,
    { what: "webhook-timestamp", timestamp: Number(timestampText), verifies, deliveryId: id },
    "No webhook-signature v1 signature matched an active secret for this endpoint",
    {
      wrongKind: (secret) =>
        standardKey(secret)
          ? null
          : "the configured secret is not a Standard Webhooks secret (whsec_ followed by base64), so it cannot have made any signature",
    },
  );
}
