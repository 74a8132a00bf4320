// Paystack: x-paystack-signature is the hex HMAC-SHA512 of the raw body, keyed with
// the integration's secret key (sk_live_… or sk_test_…, the same key as the API's).
// The signature covers no timestamp and no delivery id, so a captured delivery stays
// valid forever: replay protection rests on the idempotency of the movement's
// reference (a replayed charge.success claims a reference already claimed and posts
// nothing), never on this check. Any active secret may match (rotation).
import { explainMissingHeader, peekJson, refuse } from "@/lib/providers/explain";
import { decodeHex, hmac, safeEqual } from "@/lib/providers/signature";
import { matchAnySecret, noActiveSecret } from "@/lib/providers/verdict";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const PAYSTACK_SIGNATURE_HEADER = "x-paystack-signature";

export function verifyPaystack({ rawBody, headers, secrets }: VerifyInput): VerifyResult {
  const header = headers.get(PAYSTACK_SIGNATURE_HEADER);
  if (!header)
    return refuse("missing_header", "Missing x-paystack-signature header", explainMissingHeader(headers, "paystack"));
  const signature = decodeHex(header.trim());
  if (signature?.length !== 64)
    return {
      ok: false,
      reason: "malformed_header",
      message: "x-paystack-signature is not a hex HMAC-SHA512 (128 hex characters)",
    };
  if (secrets.length === 0) return noActiveSecret("Paystack secret key");
  const verifies = (body: Buffer, secret: string) => safeEqual(signature, hmac("sha512", secret, body));
  return matchAnySecret(
    { rawBody, secrets },
    verifies,
    null,
    "x-paystack-signature does not match the body under any active secret key for this endpoint",
    { secretName: "secret key", wrongKind: paystackWrongKind, modeNote: paystackModeNote(rawBody, secrets) },
  );
}

function paystackWrongKind(secret: string): string | null {
  if (!/^pk_(test|live)_/.test(secret)) return null;
  return "the configured key starts with pk_, which is Paystack's public key; webhooks are signed with the secret key (sk_live_… or sk_test_…, Settings > API Keys & Webhooks)";
}

/** Paystack events say their mode in data.domain; secret keys say theirs in the prefix. */
function paystackModeNote(rawBody: Buffer, secrets: readonly string[]): string | null {
  const domain = (peekJson(rawBody) as { data?: { domain?: unknown } } | undefined)?.data?.domain;
  if (domain !== "live" && domain !== "test") return null;
  const modes = secrets.map((s) => /^sk_(test|live)_/.exec(s.trim())?.[1]).filter((m): m is string => m !== undefined);
  if (modes.length === 0 || modes.includes(domain)) return null;
  return `this is a ${domain}-mode event (data.domain: "${domain}") but the endpoint holds only ${modes[0]}-mode secret keys (sk_${modes[0]}_…); Paystack signs ${domain} events with the sk_${domain}_ key (or the body was changed after signing)`;
}
