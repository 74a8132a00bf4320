import { hmacValidator } from "@adyen/api-library";
import { describe, expect, it } from "vitest";
import { adyenSignedData, verifyAdyen } from "@/lib/providers/adyen/verify";
import { anAdyenBatch, anAdyenItem, signedByAdyen } from "@/dev/testing/provider-builders";

const key = "A3F1C2D4E5B6978877665544332211009F8E7D6C5B4A39281706F5E4D3C2B1A0";
const now = 1_764_684_000;
const check = (body: unknown, o: { secrets?: string[] } = {}) =>
  verifyAdyen({
    rawBody: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
    headers: new Headers(),
    secrets: o.secrets ?? [key],
    toleranceSeconds: 300,
    now,
    settings: {},
  });

// Adyen's published example (docs "Verify HMAC signatures", and the test suites of
// Adyen's own libraries): this key, this item, this signature.
const PUBLISHED_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const publishedItem = {
  additionalData: { hmacSignature: "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=" },
  amount: { value: 1130, currency: "EUR" },
  pspReference: "7914073381342284",
  eventCode: "AUTHORISATION",
  eventDate: "2019-05-06T17:15:34.121+02:00",
  merchantAccountCode: "TestMerchant",
  operations: ["CANCEL", "CAPTURE", "REFUND"],
  merchantReference: "TestPayment-1407325143704",
  paymentMethod: "visa",
  success: "true",
};

describe("Adyen HMAC verification", () => {
  it("accepts Adyen's published example", () => {
    expect(adyenSignedData(publishedItem)).toBe(
      "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true",
    );
    expect(check(anAdyenBatch([publishedItem]), { secrets: [PUBLISHED_KEY] })).toEqual({ ok: true, deliveryId: null });
  });

  it("accepts a batch whose every item was signed by @adyen/api-library's hmacValidator", () => {
    const items = [
      anAdyenItem(),
      anAdyenItem({ eventCode: "REFUND", originalReference: "8816178952380553", value: 500 }),
      anAdyenItem({ eventCode: "CAPTURE", success: "false" }),
    ];
    const signed = items.map((i) => signedByAdyen(i, key));
    for (const item of signed) expect(new hmacValidator().validateHMAC(item as never, key)).toBe(true);
    expect(check(anAdyenBatch(signed))).toEqual({ ok: true, deliveryId: null });
  });

  it("treats missing fields as empty, as Adyen does (originalReference absent, null or empty)", () => {
    const item = signedByAdyen(anAdyenItem(), key);
    expect(check(anAdyenBatch([{ ...item, originalReference: null }])).ok).toBe(true);
    expect(check(anAdyenBatch([{ ...item, originalReference: "" }])).ok).toBe(true);
  });

  it("does not care how the JSON is laid out: the fields are signed, not the bytes", () => {
    const item = signedByAdyen(anAdyenItem(), key);
    const reordered = Object.fromEntries(Object.entries(item).reverse());
    const stringified = { ...reordered, amount: { currency: "EUR", value: "1130" } };
    expect(check(JSON.stringify(anAdyenBatch([stringified]), null, 4)).ok).toBe(true);
  });

  it("accepts either of two active keys during a rotation", () => {
    const rotated = "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF";
    expect(check(anAdyenBatch([signedByAdyen(anAdyenItem(), rotated)]), { secrets: [key, rotated] }).ok).toBe(true);
  });

  it("rejects a tampered item (amount raised after signing)", () => {
    const item = signedByAdyen(anAdyenItem({ value: 1000 }), key);
    const r = check(anAdyenBatch([{ ...item, amount: { value: 100000, currency: "EUR" } }]));
    expect(r).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      message: expect.stringContaining(
        `notificationItems[0] (pspReference ${item.pspReference as string}) failed HMAC verification`,
      ),
    });
  });

  it("rejects an item signed with another key, explaining the environment", () => {
    const other = "FFEEDDCCBBAA99887766554433221100FFEEDDCCBBAA99887766554433221100";
    const r = check(anAdyenBatch([signedByAdyen(anAdyenItem(), other)], { live: "true" }));
    expect(r).toMatchObject({
      ok: false,
      reason: "no_signature_matched",
      hint: "wrong_secret",
      message: expect.stringContaining("Adyen's live environment"),
    });
  });

  it("explains a key pasted with whitespace, and an API key in its place", () => {
    const item = signedByAdyen(anAdyenItem(), key);
    expect(check(anAdyenBatch([item]), { secrets: [`${key}\n`] })).toMatchObject({
      ok: false,
      hint: "secret_whitespace",
    });
    expect(
      check(anAdyenBatch([item]), {
        secrets: [
          "AQEyhmfxK4PKbxZDw0m/n3Q5qf3VaY9UCJ1+XWZe9W27jmlZiv4PD4jhfNMofnLr2K5i8/0QwV1bDb7kfNy1WIxIIkxgBw==-abc",
        ],
      }),
    ).toMatchObject({
      ok: false,
      hint: "wrong_secret",
      message: expect.stringContaining("not hexadecimal (it looks like an Adyen API key)"),
    });
  });

  it("refuses the whole batch when one item fails, naming its index and pspReference", () => {
    const good = signedByAdyen(anAdyenItem(), key);
    const forged = {
      ...signedByAdyen(anAdyenItem({ pspReference: "9999999999999999" }), key),
      amount: { value: 500000, currency: "EUR" },
    };
    const r = check(anAdyenBatch([good, forged, signedByAdyen(anAdyenItem(), key)]));
    expect(r).toMatchObject({ ok: false, reason: "no_signature_matched", hint: "payload_altered" });
    expect(!r.ok && r.message).toMatch(
      /^notificationItems\[1\] \(pspReference 9999999999999999\) failed HMAC verification .* \(1 of 3 items failed\); the whole batch was refused and nothing stored/,
    );
    expect(!r.ok && r.message).toContain(
      "Likely cause: other items in this batch verify with the endpoint's HMAC key, so the key is right",
    );
  });

  it("refuses an item without hmacSignature (the missing-signature case)", () => {
    const item = anAdyenItem({ pspReference: "8816178952380553" });
    expect(check(anAdyenBatch([signedByAdyen(anAdyenItem(), key), item]))).toMatchObject({
      ok: false,
      reason: "missing_signature",
      message: expect.stringContaining(
        "notificationItems[1] (pspReference 8816178952380553) has no additionalData.hmacSignature (1 of 2 items failed)",
      ),
    });
  });

  it("refuses what is not a notification batch", () => {
    expect(check("not json")).toMatchObject({ ok: false, reason: "malformed_body" });
    expect(check({ live: "false", notificationItems: [] })).toMatchObject({
      ok: false,
      reason: "malformed_body",
      message: expect.stringContaining("no notificationItems"),
    });
    expect(check({ notificationItems: [{ Something: {} }] })).toMatchObject({ ok: false, reason: "malformed_body" });
  });

  it("refuses when no key is configured", () => {
    expect(check(anAdyenBatch([signedByAdyen(anAdyenItem(), key)]), { secrets: [] })).toMatchObject({
      ok: false,
      reason: "no_active_secret",
    });
  });
});
