import { describe, expect, it } from "vitest";
import { verifyFlutterwave } from "@/lib/providers/flutterwave/verify";
import { aFlutterwaveCharge } from "@/dev/testing/provider-builders";

// The scheme has no computation to take a vector from: verif-hash is the secret hash
// itself (Flutterwave's docs: compare the header with the hash you set). The cases
// below are that comparison, plus what it must not accept.
const secretHash = "tally-flw-hash-6b1f3c0e9a";
const body = Buffer.from(JSON.stringify(aFlutterwaveCharge()));
const check = (hash: string | null, o: { raw?: Buffer; secrets?: string[] } = {}) =>
  verifyFlutterwave({
    rawBody: o.raw ?? body,
    headers: new Headers(hash === null ? {} : { "verif-hash": hash }),
    secrets: o.secrets ?? [secretHash],
    toleranceSeconds: 300,
    now: 0,
    settings: {},
  });

describe("Flutterwave verif-hash verification", () => {
  it("accepts the configured secret hash", () => {
    expect(check(secretHash)).toEqual({ ok: true, deliveryId: null });
  });

  it("accepts whatever body comes with it: the hash does not cover the body (the confirm hook does)", () => {
    const tampered = Buffer.from(body.toString().replace('"amount":100', '"amount":100000'));
    expect(check(secretHash, { raw: tampered }).ok).toBe(true);
  });

  it("rejects another hash, and near misses of the right one", () => {
    expect(check("someone-elses-hash")).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
      message: expect.stringContaining("verif-hash does not equal any active secret hash"),
    });
    expect(check(secretHash.slice(0, -1))).toMatchObject({ ok: false, reason: "no_signature_matched" });
    expect(check(`${secretHash}x`)).toMatchObject({ ok: false, reason: "no_signature_matched" });
    expect(check(secretHash.toUpperCase())).toMatchObject({ ok: false, reason: "no_signature_matched" });
  });

  it("explains a configured hash with whitespace, and an API key configured in its place", () => {
    expect(check(secretHash, { secrets: [`${secretHash}\n`] })).toMatchObject({ ok: false, hint: "secret_whitespace" });
    expect(check(secretHash, { secrets: ["FLWSECK_TEST-0123456789abcdef0123456789abcdef-X"] })).toMatchObject({
      ok: false,
      hint: "wrong_secret",
      message: expect.stringContaining("is a Flutterwave API key"),
    });
  });

  it("accepts either of two active hashes during a rotation", () => {
    expect(check("the-new-hash", { secrets: [secretHash, "the-new-hash"] }).ok).toBe(true);
  });

  it("names a missing header, and another provider's header in its place", () => {
    expect(check(null)).toEqual({ ok: false, reason: "missing_header", message: "Missing verif-hash header" });
    const r = verifyFlutterwave({
      rawBody: body,
      headers: new Headers({ "x-paystack-signature": "ab" }),
      secrets: [secretHash],
      toleranceSeconds: 300,
      now: 0,
      settings: {},
    });
    expect(r).toMatchObject({ ok: false, reason: "missing_header", hint: "wrong_endpoint" });
  });

  it("refuses when no hash is configured", () => {
    expect(check(secretHash, { secrets: [] })).toMatchObject({ ok: false, reason: "no_active_secret" });
  });
});
