// What people are shown of a stored delivery's signature: that it was there and
// which check it passed, never the signature itself. A stored signature is a
// credential: PayPal's covers only a CRC-32 of the body, so with its headers anyone
// could make a forged body verify, and any signature lets a reader replay the
// delivery. The stored bytes and headers stay untouched (reprocessing and
// evidence need them); only what the API, the dashboard and case evidence return
// is redacted, here, in one place.
import type { EventSource, Provider } from "@/lib/generated/prisma/enums";

/** Headers that carry a signature (or, for Flutterwave, the shared secret itself), lower case. */
export const SIGNATURE_HEADERS: ReadonlySet<string> = new Set([
  "stripe-signature",
  "webhook-signature",
  "svix-signature",
  "paypal-transmission-sig",
  "verif-hash",
  "x-paystack-signature",
]);

/** The check a delivery had to pass to be stored, per provider (lib/providers/<provider>/verify.ts). */
const CHECKS: Record<Provider, string> = {
  stripe: "Stripe-Signature: HMAC-SHA256 over timestamp.body with the endpoint's whsec_ secret, within the tolerance",
  standard: "webhook-signature: HMAC-SHA256 over id.timestamp.body with the endpoint's secret, within the tolerance",
  adyen: "additionalData.hmacSignature of every notification item: HMAC-SHA256 with the endpoint's HMAC key",
  paystack: "x-paystack-signature: HMAC-SHA512 of the body with the endpoint's secret key",
  flutterwave:
    "verif-hash equal to the endpoint's secret hash; each payment then confirmed with Flutterwave's verify API",
  paypal:
    "PAYPAL-TRANSMISSION-SIG: RSA-SHA256 over transmission id|time|webhook id|CRC-32 of the body, with PayPal's certificate; each capture and refund then confirmed with PayPal's API",
};

export type SignatureShown =
  | { present: true; verifiedBy: string; redacted: string[] }
  | { present: false; why: string; redacted: string[] };

export type ShownDelivery = {
  headers: Record<string, string>;
  signature: SignatureShown;
  /** The body as received, with any signature inside it (Adyen's hmacSignature) replaced by "[redacted]". */
  body:
    | { purged: false; text: string | null; base64: string; bytes: number; redacted: boolean }
    /** Removed after the tenant's retention: only its sha256 (hex) and the time of removal are left. */
    | { purged: true; text: null; purgedAt: Date; sha256: string };
};

// Adyen signs each item inside the body; its value is a base64 HMAC, so it holds no quote or backslash.
const ADYEN_SIGNATURE = /("hmacSignature"\s*:\s*")[^"\\]*(")/g;

function utf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** A stored delivery as people may see it: headers and body without signatures, and which check it passed. */
export function shownDelivery(e: {
  provider: Provider;
  source: EventSource;
  headers: unknown;
  rawBody: Uint8Array | null;
  bodySha256: Uint8Array;
  bodyPurgedAt: Date | null;
}): ShownDelivery {
  const redacted: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries((e.headers ?? {}) as Record<string, unknown>)) {
    if (SIGNATURE_HEADERS.has(name.toLowerCase())) redacted.push(name.toLowerCase());
    else headers[name] = String(value);
  }
  const signature: SignatureShown =
    e.source !== "RECONCILIATION"
      ? { present: true, verifiedBy: CHECKS[e.provider], redacted }
      : {
          present: false,
          why: "fetched from the provider's API by reconciliation, not delivered: no signature to check",
          redacted,
        };
  if (e.rawBody === null)
    return {
      headers,
      signature,
      body: {
        purged: true,
        text: null,
        purgedAt: e.bodyPurgedAt ?? new Date(0),
        sha256: Buffer.from(e.bodySha256).toString("hex"),
      },
    };
  let text = utf8(e.rawBody);
  let shown: Uint8Array = e.rawBody;
  let bodyRedacted = false;
  const withoutSignatures = text?.replace(ADYEN_SIGNATURE, "$1[redacted]$2") ?? null;
  if (withoutSignatures !== null && withoutSignatures !== text) {
    text = withoutSignatures;
    shown = Buffer.from(text, "utf8");
    bodyRedacted = true;
    redacted.push("additionalData.hmacSignature");
  }
  return {
    headers,
    signature,
    body: {
      purged: false,
      text,
      base64: Buffer.from(shown).toString("base64"),
      bytes: e.rawBody.length,
      redacted: bodyRedacted,
    },
  };
}
