import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyPaystack } from "@/lib/providers/paystack/verify";
import { aPaystackCharge, paystackSignature } from "@/dev/testing/provider-builders";

// Paystack publishes no SDK to sign with and, as far as we recall, no worked example
// (a body, key and resulting signature) in its docs; rather than invent one, the
// vectors are RFC 4231's published HMAC-SHA512 case, one computed by openssl, and
// the documented scheme computed with node:crypto.
const secret = "sk_test_5a1b0c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b";
const body = Buffer.from(JSON.stringify(aPaystackCharge({ reference: "T685312322670591", domain: "test" })));
const check = (signature: string | null, o: { raw?: Buffer; secrets?: string[] } = {}) =>
  verifyPaystack({
    rawBody: o.raw ?? body,
    headers: new Headers(signature === null ? {} : { "x-paystack-signature": signature }),
    secrets: o.secrets ?? [secret],
    toleranceSeconds: 300,
    now: 0,
    settings: {},
  });

describe("Paystack signature verification", () => {
  it("accepts the hex HMAC-SHA512 of the raw body under the secret key", () => {
    const signature = createHmac("sha512", secret).update(body).digest("hex");
    expect(signature).toHaveLength(128);
    expect(check(signature)).toEqual({ ok: true, deliveryId: null });
    expect(check(signature.toUpperCase()).ok).toBe(true);
  });

  it("accepts RFC 4231 test case 2, which is this scheme exactly (HMAC-SHA512, hex)", () => {
    // Published in RFC 4231 §4.3: key "Jefe", data "what do ya want for nothing?".
    const rfc4231 =
      "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737";
    expect(check(rfc4231, { raw: Buffer.from("what do ya want for nothing?"), secrets: ["Jefe"] })).toEqual({
      ok: true,
      deliveryId: null,
    });
  });

  it("accepts a vector computed by openssl, independently of node:crypto", () => {
    // printf '{}' | openssl dgst -sha512 -hmac sk_test_fixed
    const openssl =
      "bc99623d87cc8d164a44311b650a4806e3c1f52c9a02cde03cd68e268ba5fe41d6587f9bc669d2b16a2d0fe8682c4fac930093fa302e783018c244aca0f93f7b";
    expect(check(openssl, { raw: Buffer.from("{}"), secrets: ["sk_test_fixed"] }).ok).toBe(true);
  });

  it("rejects a tampered body", () => {
    const tampered = Buffer.from(body.toString().replace('"amount":10000', '"amount":99000'));
    expect(check(paystackSignature(body, secret), { raw: tampered })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
    });
  });

  it("rejects another secret key, and says when the key's mode differs from the event's", () => {
    const live = Buffer.from(JSON.stringify(aPaystackCharge({ domain: "live" })));
    expect(check(paystackSignature(live, "sk_live_abc123abc123abc123"), { raw: live })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
      message: expect.stringContaining(
        'this is a live-mode event (data.domain: "live") but the endpoint holds only test-mode secret keys',
      ),
    });
    expect(check(paystackSignature(body, "sk_test_someone_else"))).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
    });
  });

  it("explains a re-serialised body, a key with whitespace, and a public key in place of the secret key", () => {
    const pretty = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(check(paystackSignature(body, secret), { raw: pretty })).toMatchObject({
      ok: false,
      hint: "body_reserialized",
    });
    expect(check(paystackSignature(body, secret), { secrets: [` ${secret} `] })).toMatchObject({
      ok: false,
      hint: "secret_whitespace",
    });
    expect(check(paystackSignature(body, secret), { secrets: ["pk_test_0123456789abcdef"] })).toMatchObject({
      ok: false,
      hint: "wrong_secret",
      message: expect.stringContaining("Paystack's public key"),
    });
  });

  it("accepts either of two active secret keys during a rotation", () => {
    const rotated = "sk_test_rotated_0000000000000000";
    expect(check(paystackSignature(body, rotated), { secrets: [secret, rotated] }).ok).toBe(true);
  });

  it("names a missing or malformed header", () => {
    expect(check(null)).toEqual({
      ok: false,
      reason: "missing_header",
      message: "Missing x-paystack-signature header",
    });
    expect(check("not-hex")).toMatchObject({ ok: false, reason: "malformed_header" });
    expect(check("ab".repeat(32))).toMatchObject({
      ok: false,
      reason: "malformed_header",
      message: expect.stringContaining("128 hex characters"),
    });
  });
});
