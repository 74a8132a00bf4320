import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyStandard } from "@/lib/providers/standard/verify";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const body = Buffer.from('{"type":"payment.succeeded","data":{"id":"pay_1","amount":100,"currency":"EUR"}}');
const at = new Date(1_760_000_000_000);
const now = Math.floor(at.getTime() / 1000);
const headersFor = (o: { key?: string; id?: string; when?: Date; prefix?: string; raw?: Buffer } = {}) => {
  const id = o.id ?? "msg_1";
  const when = o.when ?? at;
  const p = o.prefix ?? "webhook";
  return new Headers({
    [`${p}-id`]: id,
    [`${p}-timestamp`]: String(Math.floor(when.getTime() / 1000)),
    [`${p}-signature`]: new Webhook(o.key ?? secret).sign(id, when, (o.raw ?? body).toString()),
  });
};
const check = (headers: Headers, o: { secrets?: string[]; raw?: Buffer } = {}) =>
  verifyStandard({
    rawBody: o.raw ?? body,
    headers,
    secrets: o.secrets ?? [secret],
    toleranceSeconds: 300,
    now,
    settings: {},
  });

describe("Standard Webhooks signature verification", () => {
  it("accepts a signature made by the standardwebhooks package", () => {
    expect(check(headersFor())).toEqual({ ok: true, deliveryId: "msg_1" });
  });

  it("accepts the svix-* header names", () => {
    expect(check(headersFor({ prefix: "svix" })).ok).toBe(true);
  });

  it("agrees with the standardwebhooks package's verifier", () => {
    const h = headersFor({ when: new Date() });
    expect(() => new Webhook(secret).verify(body.toString(), Object.fromEntries(h))).not.toThrow();
    expect(
      verifyStandard({
        rawBody: body,
        headers: h,
        secrets: [secret],
        toleranceSeconds: 300,
        now: Math.floor(Date.now() / 1000),
        settings: {},
      }).ok,
    ).toBe(true);
  });

  it("rejects a tampered body", () => {
    expect(check(headersFor(), { raw: Buffer.from(body.toString().replace("100", "1000")) })).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
    });
  });

  it("explains a body whose trailing newline a proxy removed", () => {
    const withNewline = Buffer.from(`${body}\n`);
    expect(check(headersFor({ raw: withNewline }))).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "body_reserialized",
      message: expect.stringContaining("trailing newline"),
    });
  });

  it("explains a secret with whitespace, and a timestamp's skew", () => {
    expect(check(headersFor(), { secrets: [`${secret} `] })).toMatchObject({ ok: false, hint: "secret_whitespace" });
    expect(check(headersFor({ when: new Date(at.getTime() - 900_000) }))).toMatchObject({
      hint: "clock_skew",
      message: expect.stringContaining(
        "900 s old, outside the 300 s tolerance. Likely cause: the delivery was held up or replayed, or this server's clock is at least 600 s fast",
      ),
    });
  });

  it("rejects a tampered webhook-id (the id is signed)", () => {
    const h = headersFor();
    h.set("webhook-id", "msg_2");
    expect(check(h)).toMatchObject({ ok: false, reason: "no_signature_matched" });
  });

  it("rejects another secret", () => {
    expect(
      check(headersFor({ key: `whsec_${Buffer.from("another-secret-entirely").toString("base64")}` })),
    ).toMatchObject({ ok: false, reason: "no_signature_matched" });
  });

  it("rejects timestamps more than five minutes off, in either direction", () => {
    expect(check(headersFor({ when: new Date(at.getTime() - 301_000) }))).toMatchObject({
      ok: false,
      reason: "timestamp_outside_tolerance",
    });
    expect(check(headersFor({ when: new Date(at.getTime() + 301_000) }))).toMatchObject({
      ok: false,
      reason: "timestamp_outside_tolerance",
      message: expect.stringContaining("in the future"),
    });
    expect(check(headersFor({ when: new Date(at.getTime() - 299_000) })).ok).toBe(true);
  });

  it("accepts the second of two secrets during a rotation", () => {
    const rotated = `whsec_${Buffer.from("rotated-secret-0123456789").toString("base64")}`;
    expect(check(headersFor({ key: rotated }), { secrets: [secret, rotated] }).ok).toBe(true);
  });

  it("accepts when one of several space-separated signatures matches", () => {
    const h = headersFor();
    h.set("webhook-signature", `v1,${Buffer.alloc(32).toString("base64")} v2,whatever ${h.get("webhook-signature")}`);
    expect(check(h).ok).toBe(true);
  });

  it("names the missing headers", () => {
    const h = headersFor();
    h.delete("webhook-timestamp");
    h.delete("webhook-signature");
    expect(check(h)).toMatchObject({
      ok: false,
      reason: "missing_header",
      message: "Missing webhook-timestamp, webhook-signature headers (or the svix-* equivalents)",
    });
  });
});
