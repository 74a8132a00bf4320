import { describe, expect, it } from "vitest";
import { explainMismatch, explainMissingHeader, explainSkew, refuse } from "@/lib/providers/explain";
import { hmac } from "@/lib/providers/signature";

const original = Buffer.from('{"id":"evt_1","amount":100}');
const secret = "s3cret-key";
const signature = hmac("sha256", secret, original);
const verifies = (body: Buffer, key: string) => hmac("sha256", key, body).equals(signature);

describe("explaining a signature that matched no secret", () => {
  it("says the body was re-serialised when the compact re-serialisation verifies", () => {
    const pretty = Buffer.from(JSON.stringify(JSON.parse(original.toString()), null, 2));
    expect(explainMismatch({ rawBody: pretty, secrets: [secret], verifies })).toMatchObject({
      hint: "body_reserialized",
      cause: expect.stringContaining("compact JSON"),
    });
  });

  it("says whitespace was added when the trimmed body verifies", () => {
    expect(explainMismatch({ rawBody: Buffer.from(`${original}\r\n`), secrets: [secret], verifies })).toMatchObject({
      hint: "body_reserialized",
    });
  });

  it("says the secret has whitespace when the trimmed secret verifies", () => {
    expect(explainMismatch({ rawBody: original, secrets: [`${secret}\n`], verifies })).toMatchObject({
      hint: "secret_whitespace",
      cause: expect.stringContaining("whitespace removed"),
    });
  });

  it("names a secret of the wrong kind, then a mode mismatch, else a wrong secret", () => {
    const wrongKind = (s: string) => (s.startsWith("sk_") ? "an API key" : null);
    expect(explainMismatch({ rawBody: original, secrets: ["sk_test_123"], verifies, wrongKind })).toEqual({
      hint: "wrong_secret",
      cause: "an API key",
    });
    expect(
      explainMismatch({ rawBody: original, secrets: ["other"], verifies, wrongKind, modeNote: "live event, test key" }),
    ).toEqual({ hint: "wrong_secret", cause: "live event, test key" });
    expect(explainMismatch({ rawBody: original, secrets: ["a", "b"], verifies })).toMatchObject({
      hint: "wrong_secret",
      cause: expect.stringContaining("any of the endpoint's 2 active secrets"),
    });
  });

  it("does not guess re-serialisation for schemes that sign fields, not bytes", () => {
    const pretty = Buffer.from(JSON.stringify(JSON.parse(original.toString()), null, 2));
    expect(explainMismatch({ rawBody: pretty, secrets: [secret], verifies, bodySigned: false }).hint).toBe(
      "wrong_secret",
    );
  });

  it("does not re-parse large bodies (refusing forgeries stays cheap)", () => {
    const big = Buffer.from(JSON.stringify({ pad: "x".repeat(300 * 1024) }));
    const bigSig = hmac("sha256", secret, big);
    const pretty = Buffer.from(JSON.stringify(JSON.parse(big.toString()), null, 2));
    const r = explainMismatch({
      rawBody: pretty,
      secrets: [secret],
      verifies: (b, k) => hmac("sha256", k, b).equals(bigSig),
    });
    expect(r.hint).toBe("wrong_secret");
  });
});

describe("explaining a timestamp outside the tolerance", () => {
  it("says which clock is off, by at least how much, and whether the signature is genuine", () => {
    expect(explainSkew(400, 300, true)).toEqual({
      hint: "clock_skew",
      cause:
        "the delivery was held up or replayed, or this server's clock is at least 100 s fast (check NTP); the signature itself is valid, so the provider did sign it",
    });
    expect(explainSkew(-360, 300, false).cause).toBe(
      "this server's clock is at least 60 s slow, or the sender's is fast (check NTP); the signature does not verify either, so it may not come from the provider at all",
    );
    expect(explainSkew(-360, 300).cause).toBe(
      "this server's clock is at least 60 s slow, or the sender's is fast (check NTP)",
    );
  });
});

describe("explaining a missing signature header", () => {
  it("recognises another provider's signature header", () => {
    expect(explainMissingHeader(new Headers({ "x-paystack-signature": "ab" }), "stripe")).toMatchObject({
      hint: "wrong_endpoint",
      cause: expect.stringContaining("/api/webhooks/{tenant}/paystack"),
    });
    expect(explainMissingHeader(new Headers({}), "stripe")).toBeNull();
  });

  it("appends the cause to the message only when there is one", () => {
    expect(refuse("missing_header", "Missing X")).toEqual({
      ok: false,
      reason: "missing_header",
      message: "Missing X",
    });
    expect(refuse("missing_header", "Missing X", { hint: "wrong_endpoint", cause: "y" })).toEqual({
      ok: false,
      reason: "missing_header",
      message: "Missing X. Likely cause: y",
      hint: "wrong_endpoint",
    });
  });
});
