import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { verifyStripe } from "@/lib/providers/stripe/verify";

const secret = "whsec_test_secret_for_tally_0123456789";
const body = Buffer.from(JSON.stringify({ id: "evt_1", type: "payment_intent.succeeded", data: { object: {} } }));
const now = 1_760_000_000;
const sign = (payload: Buffer, key: string, timestamp = now) =>
  Stripe.webhooks.generateTestHeaderString({ payload: payload.toString(), secret: key, timestamp });
const check = (header: string | null, o: { secrets?: string[]; raw?: Buffer; at?: number; tolerance?: number } = {}) =>
  verifyStripe({
    rawBody: o.raw ?? body,
    headers: new Headers(header === null ? {} : { "stripe-signature": header }),
    secrets: o.secrets ?? [secret],
    toleranceSeconds: o.tolerance ?? 300,
    now: o.at ?? now,
    settings: {},
  });

describe("Stripe signature verification", () => {
  it("accepts a header produced by the official stripe package", () => {
    expect(check(sign(body, secret))).toEqual({ ok: true, deliveryId: null });
  });

  it("agrees with the stripe package's own verifier on what it accepts", () => {
    const header = sign(body, secret);
    expect(Stripe.webhooks.signature!.verifyHeader(body.toString(), header, secret, 300, undefined, now)).toBe(true);
    expect(check(header).ok).toBe(true);
  });

  it("rejects a tampered body", () => {
    const header = sign(body, secret);
    const tampered = Buffer.from(body.toString().replace("evt_1", "evt_2"));
    expect(check(header, { raw: tampered })).toMatchObject({ ok: false, reason: "no_signature_matched" });
  });

  it("rejects a body re-serialised with different whitespace, and says so", () => {
    const header = sign(body, secret);
    const pretty = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(check(header, { raw: pretty })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "body_reserialized",
      message: expect.stringContaining("re-serialised as compact JSON"),
    });
  });

  it("explains a secret pasted with whitespace, and an API key in place of the signing secret", () => {
    expect(check(sign(body, secret), { secrets: [` ${secret}\n`] })).toMatchObject({
      ok: false,
      hint: "secret_whitespace",
    });
    expect(check(sign(body, secret), { secrets: ["sk_test_51Hxyz"] })).toMatchObject({
      ok: false,
      hint: "wrong_secret",
      message: expect.stringContaining("starts with sk_test_, which is a Stripe API key"),
    });
  });

  it("explains another secret with the event's mode", () => {
    const live = Buffer.from(
      JSON.stringify({ id: "evt_1", type: "payment_intent.succeeded", livemode: true, data: { object: {} } }),
    );
    expect(check(sign(live, "whsec_the_test_mode_secret"), { raw: live })).toMatchObject({
      ok: false,
      hint: "wrong_secret",
      message: expect.stringContaining("This event is live-mode"),
    });
  });

  it("rejects a signature made with another secret", () => {
    expect(check(sign(body, "whsec_someone_else"))).toMatchObject({ ok: false, reason: "no_signature_matched" });
  });

  it("rejects a timestamp older than the tolerance and names the skew", () => {
    const r = check(sign(body, secret, now - 301));
    expect(r).toMatchObject({ ok: false, reason: "timestamp_outside_tolerance", hint: "clock_skew" });
    expect(!r.ok && r.message).toContain("301 s old");
    expect(!r.ok && r.message).toContain(
      "outside the 300 s tolerance. Likely cause: the delivery was held up or replayed, or this server's clock is at least 1 s fast (check NTP); the signature itself is valid",
    );
    expect(check(sign(body, secret, now + 400))).toMatchObject({
      hint: "clock_skew",
      message: expect.stringContaining("this server's clock is at least 100 s slow"),
    });
  });

  it("honours a per-endpoint tolerance", () => {
    expect(check(sign(body, secret, now - 301), { tolerance: 600 }).ok).toBe(true);
    expect(check(sign(body, secret, now - 61), { tolerance: 60 }).ok).toBe(false);
  });

  it("accepts either of two active secrets during a rotation", () => {
    const rotated = "whsec_new_secret_after_rotation_987";
    expect(check(sign(body, rotated), { secrets: [secret, rotated] }).ok).toBe(true);
    expect(check(sign(body, secret), { secrets: [secret, rotated] }).ok).toBe(true);
  });

  it("accepts when any of several v1 signatures matches", () => {
    const good = sign(body, secret)
      .split(",")
      .find((p) => p.startsWith("v1="))!;
    expect(check(`t=${now},v1=${"ab".repeat(32)},${good}`).ok).toBe(true);
  });

  it("recognises a Standard Webhooks delivery sent to the Stripe URL", () => {
    const r = verifyStripe({
      rawBody: body,
      headers: new Headers({ "webhook-signature": "v1,abc" }),
      secrets: [secret],
      toleranceSeconds: 300,
      now,
      settings: {},
    });
    expect(r).toMatchObject({ ok: false, reason: "missing_header", hint: "wrong_endpoint" });
  });

  it("names what is wrong with a missing or malformed header", () => {
    expect(check(null)).toMatchObject({
      ok: false,
      reason: "missing_header",
      message: "Missing Stripe-Signature header",
    });
    expect(check(`v1=${"ab".repeat(32)}`)).toMatchObject({
      ok: false,
      reason: "malformed_header",
      message: expect.stringContaining("no timestamp"),
    });
    expect(check(`t=${now}`)).toMatchObject({
      ok: false,
      reason: "malformed_header",
      message: expect.stringContaining("no v1"),
    });
  });
});
