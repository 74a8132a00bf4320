// Flutterwave: the verif-hash header carries, verbatim, the "secret hash" set on the
// dashboard. It is a shared password, not a signature: it covers neither the body
// nor a time, so whoever sees one delivery can forge any other. Two consequences:
// the header is never stored beside the event (it IS the secret), and the worker
// asks Flutterwave's verify API before crediting (confirm.ts). Replays rest on the
// idempotency of the reference. Compared in constant time, through digests so the
// comparison leaks neither content nor length; any active secret hash may match.
import { createHash, timingSafeEqual } from "node:crypto";
import { explainMissingHeader, refuse } from "@/lib/providers/explain";
import { matchAnySecret, noActiveSecret } from "@/lib/providers/verdict";
import type { VerifyInput, VerifyResult } from "@/lib/providers/types";

export const FLUTTERWAVE_HASH_HEADER = "verif-hash";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

export function verifyFlutterwave({ rawBody, headers, secrets }: VerifyInput): VerifyResult {
  const header = headers.get(FLUTTERWAVE_HASH_HEADER);
  if (!header)
    return refuse("missing_header", "Missing verif-hash header", explainMissingHeader(headers, "flutterwave"));
  if (secrets.length === 0) return noActiveSecret("Flutterwave secret hash");
  const received = digest(header);
  const verifies = (_body: Buffer, secret: string) => timingSafeEqual(received, digest(secret));
  return matchAnySecret(
    { rawBody, secrets },
    verifies,
    null,
    "verif-hash does not equal any active secret hash for this endpoint",
    { bodySigned: false, secretName: "secret hash", wrongKind: flutterwaveWrongKind },
  );
}

function flutterwaveWrongKind(secret: string): string | null {
  if (!/^FLW(SECK|PUBK)(_TEST)?-/.test(secret)) return null;
  return "the configured secret is a Flutterwave API key (FLWSECK…/FLWPUBK…); verif-hash carries the secret hash you chose under Settings > Webhooks, which is a different value";
}
