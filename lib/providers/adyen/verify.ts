// Adyen standard notifications: one POST carries a batch,
//   { "live": "false", "notificationItems": [ { "NotificationRequestItem": { … } }, … ] },
// and each item is signed on its own: additionalData.hmacSignature is the base64
// HMAC-SHA256, keyed with the hex-decoded HMAC key, of
//   pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
// (value and currency from amount; a missing field is ""). Fields are signed, not
// bytes, so re-serialising the JSON cannot break it.
//
// Batch policy: every item must verify, or the whole batch is refused with 401,
// naming the first failing item's index and pspReference, and nothing is stored.
// Adyen retries the batch as a unit, so storing the good items alone gains nothing,
// and a batch with one forged item was assembled by someone we cannot trust: its
// other items prove nothing. Only JSON notifications are understood (not form or SOAP).
import { explainMismatch, refuse, type Explanation } from "@/lib/providers/explain";
import { decodeBase64, decodeHex, hmac, safeEqual } from "@/lib/providers/signature";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

type Item = Record<string, unknown> & {
  additionalData?: Record<string, unknown> | null;
  amount?: { value?: unknown; currency?: unknown } | null;
};

const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));

/** The string Adyen signs for one notification item. */
export function adyenSignedData(item: Item): string {
  return [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    item.amount?.value,
    item.amount?.currency,
    item.eventCode,
    item.success,
  ]
    .map(text)
    .join(":");
}

function batchItems(rawBody: Buffer): { ok: true; items: unknown[]; live: unknown } | { ok: false; message: string } {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString("utf8"));
  } catch {
    return { ok: false, message: "Body is not JSON; Tally reads Adyen's JSON notifications only" };
  }
  const items = (body as { notificationItems?: unknown } | null)?.notificationItems;
  if (!Array.isArray(items) || items.length === 0)
    return { ok: false, message: "Body has no notificationItems: not an Adyen notification batch" };
  return { ok: true, items, live: (body as { live?: unknown }).live };
}

export function verifyAdyen({ rawBody, secrets }: VerifyInput): VerifyResult {
  const batch = batchItems(rawBody);
  if (!batch.ok) return { ok: false, reason: "malformed_body", message: batch.message };
  if (secrets.length === 0)
    return {
      ok: false,
      reason: "no_active_secret",
      message: "No active Adyen HMAC key is configured for this endpoint",
    };
  const keys = secrets.map((s) => decodeHex(s)).filter((k): k is Buffer => k !== null && k.length > 0);
  const n = batch.items.length;

  const problems: { index: number; result: Extract<VerifyResult, { ok: false }> }[] = [];
  const mismatched: { index: number; name: string; verifiesWith: (key: Buffer) => boolean }[] = [];
  batch.items.forEach((wrapper, index) => {
    const item = (wrapper as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
    if (!item || typeof item !== "object" || Array.isArray(item)) {
      problems.push({
        index,
        result: {
          ok: false,
          reason: "malformed_body",
          message: `notificationItems[${index}] has no NotificationRequestItem`,
        },
      });
      return;
    }
    const it = item as Item;
    const name = `notificationItems[${index}] (pspReference ${text(it.pspReference) || "missing"})`;
    const sigText = it.additionalData?.hmacSignature;
    if (typeof sigText !== "string" || sigText === "") {
      problems.push({
        index,
        result: { ok: false, reason: "missing_signature", message: `${name} has no additionalData.hmacSignature` },
      });
      return;
    }
    const signature = decodeBase64(sigText);
    if (!signature) {
      problems.push({
        index,
        result: { ok: false, reason: "malformed_body", message: `${name}: additionalData.hmacSignature is not base64` },
      });
      return;
    }
    const data = adyenSignedData(it);
    const verifiesWith = (key: Buffer) => safeEqual(signature, hmac("sha256", key, data));
    if (!keys.some(verifiesWith)) mismatched.push({ index, name, verifiesWith });
  });
  if (problems.length === 0 && mismatched.length === 0) return { ok: true, deliveryId: null };

  // Only the first failing item is named and explained, and only now that the batch is refused.
  const failed = problems.length + mismatched.length;
  const firstProblem = problems[0];
  const firstMismatch = mismatched[0];
  let first: Extract<VerifyResult, { ok: false }>;
  if (firstMismatch && (!firstProblem || firstMismatch.index < firstProblem.index)) {
    const { name, verifiesWith } = firstMismatch;
    // When other items verify, the key is right and this item is what is wrong.
    const explanation: Explanation =
      failed < n
        ? {
            hint: "payload_altered",
            cause:
              "other items in this batch verify with the endpoint's HMAC key, so the key is right: this item was changed after Adyen signed it, or forged",
          }
        : explainMismatch({
            rawBody,
            secrets,
            verifies: (_body, secret) => {
              const key = decodeHex(secret);
              return key !== null && key.length > 0 && verifiesWith(key);
            },
            bodySigned: false,
            secretName: "HMAC key",
            wrongKind: adyenWrongKind,
            modeNote: adyenModeNote(batch.live),
          });
    first = refuse(
      "no_signature_matched",
      `${name} failed HMAC verification against every active HMAC key`,
      explanation,
    );
  } else {
    first = firstProblem!.result;
  }

  const [head, cause] = splitCause(first.message);
  return {
    ...first,
    message: `${head} (${failed} of ${n} item${n === 1 ? "" : "s"} failed); the whole batch was refused and nothing stored, since one forged item makes the batch untrustworthy and Adyen retries it as a unit${cause}`,
  };
}

/** Keeps "Likely cause: …" at the end of the message, after the batch policy. */
function splitCause(message: string): [string, string] {
  const at = message.indexOf(". Likely cause: ");
  return at < 0 ? [message, ""] : [message.slice(0, at), message.slice(at)];
}

function adyenWrongKind(secret: string): string | null {
  if (decodeHex(secret)) return null;
  const apiKey = secret.startsWith("AQE") ? " (it looks like an Adyen API key)" : "";
  return `the configured HMAC key is not hexadecimal${apiKey}; Adyen's HMAC key is 64 hex characters, generated per webhook (Customer Area > Developers > Webhooks > the webhook > HMAC key)`;
}

function adyenModeNote(live: unknown): string | null {
  if (live !== "true" && live !== "false" && live !== true && live !== false) return null;
  const env = String(live) === "true" ? "live" : "test";
  return `no active HMAC key made this signature. The batch comes from Adyen's ${env} environment (live: "${String(live)}"), and each webhook in each environment has its own HMAC key: check the key was generated for this webhook in the ${env} Customer Area (or the item was changed after signing)`;
}
