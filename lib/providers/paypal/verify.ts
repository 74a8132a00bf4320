// PayPal: PAYPAL-TRANSMISSION-SIG is an RSA-SHA256 signature (SHA256withRSA, base64)
// over "<transmission id>|<transmission time>|<webhook id>|<CRC-32 of the raw body,
// unsigned decimal>", made with the key of the certificate at PAYPAL-CERT-URL. The
// webhook id binds a delivery to this endpoint's webhook; it is not secret and lives
// in the endpoint's settings (settings.webhookId); the endpoint's secrets are unused.
// The transmission time is signed, so it is held to the endpoint's tolerance.
import { verify as rsaVerify, type X509Certificate } from "node:crypto";
import { config } from "@/lib/platform/config";
import { explainMismatch, explainMissingHeader, explainSkew, refuse } from "@/lib/providers/explain";
import { CertificateCache, paypalCertificateUrl, type CertificateLookup } from "@/lib/providers/paypal/certificates";
import { crc32 } from "@/lib/providers/paypal/crc32";
import { decodeBase64, skewBeyond } from "@/lib/providers/signature";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const PAYPAL_HEADERS = [
  "paypal-transmission-id",
  "paypal-transmission-time",
  "paypal-transmission-sig",
  "paypal-cert-url",
  "paypal-auth-algo",
] as const;

export type CertificateSource = { get(url: URL, o?: { simulator?: boolean }): Promise<CertificateLookup> };

/** extraCertUrlPrefixes: certificate URL prefixes trusted beside PayPal's hosts, for simulators and tests only (see lib/config). */
export function paypalVerifier(
  certificates: CertificateSource,
  options: { extraCertUrlPrefixes?: () => readonly string[] } = {},
): (input: VerifyInput) => Promise<VerifyResult> {
  return async ({ rawBody, headers, settings, toleranceSeconds, now }) => {
    const [id, time, sig, certUrl, algo] = PAYPAL_HEADERS.map((name) => headers.get(name));
    const missing = PAYPAL_HEADERS.filter((name) => !headers.get(name)).map((name) => name.toUpperCase());
    if (!id || !time || !sig || !certUrl || !algo) {
      return refuse(
        "missing_header",
        `Missing ${missing.join(", ")} header${missing.length > 1 ? "s" : ""}`,
        explainMissingHeader(headers, "paypal"),
      );
    }
    if (algo !== "SHA256withRSA")
      return {
        ok: false,
        reason: "malformed_header",
        message: `PAYPAL-AUTH-ALGO ${algo} is not supported (expected SHA256withRSA)`,
      };
    const sentAt = Date.parse(time);
    if (Number.isNaN(sentAt))
      return { ok: false, reason: "malformed_header", message: "PAYPAL-TRANSMISSION-TIME is not an ISO 8601 time" };
    const signature = decodeBase64(sig);
    if (!signature || signature.length === 0)
      return { ok: false, reason: "malformed_header", message: "PAYPAL-TRANSMISSION-SIG is not base64" };
    const webhookId = typeof settings.webhookId === "string" && settings.webhookId !== "" ? settings.webhookId : null;
    if (!webhookId)
      return {
        ok: false,
        reason: "no_active_secret",
        message: "No PayPal webhook id is configured for this endpoint (settings.webhookId)",
      };
    const checked = paypalCertificateUrl(certUrl, options.extraCertUrlPrefixes?.() ?? []);
    if (!checked.ok) return { ok: false, reason: "certificate_rejected", message: checked.message };
    const skew = skewBeyond(Math.floor(sentAt / 1000), now, toleranceSeconds);
    if (skew !== null) {
      return refuse(
        "timestamp_outside_tolerance",
        `PAYPAL-TRANSMISSION-TIME is ${Math.abs(skew)} s ${skew > 0 ? "old" : "in the future"}, outside the ${toleranceSeconds} s tolerance`,
        explainSkew(skew, toleranceSeconds),
      );
    }

    const lookup = await certificates.get(checked.url, { simulator: checked.simulator === true });
    if (!lookup.ok) return { ok: false, reason: lookup.reason, message: lookup.message };
    const certificate = lookup.certificate;
    const unusable = validityProblem(certificate, now);
    if (unusable) return { ok: false, reason: "certificate_rejected", message: unusable };

    const verifies = (body: Buffer, hookId: string) =>
      rsaVerify("sha256", Buffer.from(`${id}|${time}|${hookId}|${crc32(body)}`), certificate.publicKey, signature);
    if (verifies(rawBody, webhookId)) return { ok: true, deliveryId: id };
    return refuse(
      "no_signature_matched",
      "PAYPAL-TRANSMISSION-SIG does not verify for this body and the endpoint's webhook id",
      explainMismatch({
        rawBody,
        secrets: [webhookId],
        verifies,
        secretName: "webhook id (settings.webhookId)",
        modeNote: `the signature was not made for webhook id ${webhookId}: settings.webhookId must be the id PayPal shows for this webhook${
          checked.url.hostname.includes("sandbox")
            ? " in the sandbox app (this delivery comes from the PayPal sandbox, whose webhooks have ids of their own)"
            : " in the live app"
        } (or the body was changed after signing)`,
      }),
    );
  };
}

function validityProblem(certificate: X509Certificate, now: number): string | null {
  const from = Date.parse(certificate.validFrom) / 1000;
  const to = Date.parse(certificate.validTo) / 1000;
  if (now < from) return `The PayPal certificate is not valid until ${certificate.validFrom}`;
  if (now > to) return `The PayPal certificate expired at ${certificate.validTo}`;
  return null;
}

export const paypalCertificates = new CertificateCache();
export const verifyPaypal = paypalVerifier(paypalCertificates, {
  extraCertUrlPrefixes: () => config().TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES,
});
