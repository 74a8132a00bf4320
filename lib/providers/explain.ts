// Why a delivery failed verification, for the 401 and the rejection metric. It runs
// only after a verification already failed, so the success path never pays for it.
// Guesses about the body and the secret are tested against the signature (the body
// re-serialised, the secret trimmed), never assumed; the rest is provider knowledge.
import type { Provider, VerifyFailure, VerifyHint, VerifyResult } from "@/lib/providers/types";

export type Explanation = { hint: VerifyHint; cause: string };

/**
 * Bodies larger than this are not re-parsed or re-serialised to test a guess:
 * refusing a flood of forged deliveries must stay about as cheap as verifying.
 */
const PROBE_LIMIT_BYTES = 256 * 1024;

/** A refusal, with its likely cause appended to the message when there is one. */
export function refuse(
  reason: VerifyFailure,
  message: string,
  explanation?: Explanation | null,
): Extract<VerifyResult, { ok: false }> {
  if (!explanation) return { ok: false, reason, message };
  return { ok: false, reason, message: `${message}. Likely cause: ${explanation.cause}`, hint: explanation.hint };
}

export type MismatchProbe = {
  rawBody: Buffer;
  secrets: readonly string[];
  /** Would the received signature verify over this body with this secret? */
  verifies: (body: Buffer, secret: string) => boolean;
  /** False where the scheme signs fields, not bytes (Adyen): re-serialising cannot matter. */
  bodySigned?: boolean;
  /** What the provider calls the secret, for the message: "secret", "HMAC key", "webhook id". */
  secretName?: string;
  /** Provider knowledge: why this configured secret cannot be the right kind (an API key in its place). */
  wrongKind?: (secret: string) => string | null;
  /** Provider knowledge from the payload, e.g. that it is live-mode while the secret is a test key. */
  modeNote?: string | null;
};

/** The likely cause of a signature that matched no active secret. */
export function explainMismatch(p: MismatchProbe): Explanation {
  const name = p.secretName ?? "secret";
  for (const secret of p.secrets) {
    const trimmed = secret.trim();
    if (trimmed !== secret && trimmed !== "" && p.verifies(p.rawBody, trimmed)) {
      return {
        hint: "secret_whitespace",
        cause: `the signature matches the configured ${name} with its surrounding whitespace removed; re-enter the ${name} without spaces or line breaks`,
      };
    }
  }
  if (p.bodySigned !== false) {
    for (const variant of bodyVariants(p.rawBody)) {
      if (p.secrets.some((s) => p.verifies(variant.body, s) || p.verifies(variant.body, s.trim()))) {
        return {
          hint: "body_reserialized",
          cause: `the signature matches this body ${variant.how}: something between the provider and Tally (a proxy, or a framework's JSON body parser) rewrote the body after it was signed; forward the raw bytes untouched`,
        };
      }
    }
  }
  for (const secret of p.secrets) {
    const kind = p.wrongKind?.(secret.trim());
    if (kind) return { hint: "wrong_secret", cause: kind };
  }
  if (p.modeNote) return { hint: "wrong_secret", cause: p.modeNote };
  const count =
    p.secrets.length === 1 ? `the endpoint's ${name}` : `any of the endpoint's ${p.secrets.length} active ${name}s`;
  return {
    hint: "wrong_secret",
    cause: `the signature was not made with ${count}${p.bodySigned === false ? "" : ", even allowing for a re-serialised body"}: the endpoint holds a ${name} other than the one the provider signs with (another account, another webhook, or test instead of live), or the payload was changed after signing`,
  };
}

function bodyVariants(raw: Buffer): { body: Buffer; how: string }[] {
  if (raw.length > PROBE_LIMIT_BYTES) return [];
  const text = raw.toString("utf8");
  const variants: { body: Buffer; how: string }[] = [];
  const add = (candidate: string, how: string) => {
    const body = Buffer.from(candidate, "utf8");
    if (!body.equals(raw) && !variants.some((v) => v.body.equals(body))) variants.push({ body, how });
  };
  const json = peekJson(raw);
  if (json !== undefined) {
    add(JSON.stringify(json), "re-serialised as compact JSON (JSON.stringify(JSON.parse(body)))");
    add(JSON.stringify(json, null, 2), "re-serialised as indented JSON");
  }
  add(text.trim(), "with its surrounding whitespace trimmed");
  add(`${text}\n`, "with a trailing newline restored");
  return variants;
}

/** The body as JSON when it is small enough to look at and parses; else undefined. */
export function peekJson(raw: Buffer): unknown {
  if (raw.length > PROBE_LIMIT_BYTES) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * A signed timestamp outside the tolerance (the verifier's message already says
 * how far, in which direction). `skew` is now minus the timestamp, in seconds;
 * `signatureValid` says whether the signature itself verifies, when known.
 */
export function explainSkew(skew: number, toleranceSeconds: number, signatureValid?: boolean): Explanation {
  const beyond = Math.abs(skew) - toleranceSeconds;
  const signature =
    signatureValid === true
      ? "; the signature itself is valid, so the provider did sign it"
      : signatureValid === false
        ? "; the signature does not verify either, so it may not come from the provider at all"
        : "";
  const cause =
    skew > 0
      ? `the delivery was held up or replayed, or this server's clock is at least ${beyond} s fast (check NTP)`
      : `this server's clock is at least ${beyond} s slow, or the sender's is fast (check NTP)`;
  return { hint: "clock_skew", cause: `${cause}${signature}` };
}

const SIGNATURE_HEADERS: readonly [header: string, provider: Provider, label: string][] = [
  ["stripe-signature", "stripe", "a Stripe signature (Stripe-Signature)"],
  ["webhook-signature", "standard", "a Standard Webhooks signature (webhook-signature)"],
  ["svix-signature", "standard", "a Standard Webhooks signature (svix-signature)"],
  ["x-paystack-signature", "paystack", "a Paystack signature (x-paystack-signature)"],
  ["verif-hash", "flutterwave", "a Flutterwave verif-hash"],
  ["paypal-transmission-sig", "paypal", "a PayPal signature (PAYPAL-TRANSMISSION-SIG)"],
];

/** A missing signature header, explained when the delivery carries another provider's instead. */
export function explainMissingHeader(headers: Headers, own: Provider): Explanation | null {
  for (const [header, provider, label] of SIGNATURE_HEADERS) {
    if (provider !== own && headers.has(header)) {
      return {
        hint: "wrong_endpoint",
        cause: `the delivery carries ${label}: it is a ${provider} webhook sent to the ${own} URL; point it at /api/webhooks/{tenant}/${provider}`,
      };
    }
  }
  return null;
}
