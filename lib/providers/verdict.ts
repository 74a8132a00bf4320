// The steps every shared-secret check takes once it has read its header: refuse a
// signed timestamp outside the tolerance (saying whether the signature would have
// held), refuse when the endpoint has no active secret, then accept if any active
// secret verifies (rotation) or refuse with the likeliest cause. Stripe, Standard
// Webhooks, Paystack and Flutterwave wrote these steps out each; each verifier still
// chooses their order and words its own messages.
import { explainMismatch, explainSkew, refuse, type MismatchProbe } from "@/lib/providers/explain";
import { skewBeyond } from "@/lib/providers/signature";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

type Refusal = Extract<VerifyResult, { ok: false }>;
type Verifies = MismatchProbe["verifies"];

/** The refusal for a timestamp outside the tolerance, or null when it is inside. `what` names the header for the message. */
export function refuseSkew(
  what: string,
  timestamp: number,
  { rawBody, secrets, toleranceSeconds, now }: VerifyInput,
  verifies: Verifies,
): Refusal | null {
  const skew = skewBeyond(timestamp, now, toleranceSeconds);
  if (skew === null) return null;
  return refuse(
    "timestamp_outside_tolerance",
    `${what} is ${Math.abs(skew)} s ${skew > 0 ? "old" : "in the future"}, outside the ${toleranceSeconds} s tolerance`,
    explainSkew(skew, toleranceSeconds, secrets.length > 0 ? secrets.some((s) => verifies(rawBody, s)) : undefined),
  );
}

/** An endpoint with no active secret can verify nothing; `secretName` is the provider's word for it. */
export function noActiveSecret(secretName: string): Refusal {
  return {
    ok: false,
    reason: "no_active_secret",
    message: `No active ${secretName} is configured for this endpoint`,
  };
}

/** Accepted when any active secret verifies the body; otherwise refused with `message` and the likely cause. */
export function matchAnySecret(
  { rawBody, secrets }: Pick<VerifyInput, "rawBody" | "secrets">,
  verifies: Verifies,
  deliveryId: string | null,
  message: string,
  probe: Omit<MismatchProbe, "rawBody" | "secrets" | "verifies">,
): VerifyResult {
  if (secrets.some((secret) => verifies(rawBody, secret))) return { ok: true, deliveryId };
  return refuse("no_signature_matched", message, explainMismatch({ rawBody, secrets, verifies, ...probe }));
}

/** The three steps in the order the timestamped schemes (Stripe, Standard Webhooks) take them: the time first. */
export function judgeTimestamped(
  input: VerifyInput,
  signed: { what: string; timestamp: number; verifies: Verifies; deliveryId: string | null },
  message: string,
  probe: Omit<MismatchProbe, "rawBody" | "secrets" | "verifies">,
): VerifyResult {
  const stale = refuseSkew(signed.what, signed.timestamp, input, signed.verifies);
  if (stale) return stale;
  if (input.secrets.length === 0) return noActiveSecret("signing secret");
  return matchAnySecret(input, signed.verifies, signed.deliveryId, message, probe);
}
