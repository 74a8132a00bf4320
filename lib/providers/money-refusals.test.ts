// Money that is not money, sent to every provider's parser: refused at parse
// time, naming the field, so it fails once and visibly instead of posting with a
// reversed sign, an invented currency, or an amount the ledger cannot hold.
import { describe, expect, it } from "vitest";
import { adapterFor } from "@/lib/providers";
import type { Provider } from "@/lib/providers/types";
import { aPaymentWithMoney, AMOUNT_FIELD, CURRENCY_FIELD } from "@/dev/testing/provider-builders";

const PROVIDERS: Provider[] = ["stripe", "standard", "adyen", "paystack", "flutterwave", "paypal"];
const DECIMAL: Provider[] = ["flutterwave", "paypal"];
const parse = (provider: Provider, body: unknown) => adapterFor(provider)!.parse(Buffer.from(JSON.stringify(body)));

// Minor-unit providers get integers; decimal providers the same money as major-unit decimals.
const hostile: { name: string; minor: unknown; decimal: unknown; says: RegExp }[] = [
  { name: "a negative number", minor: -500, decimal: -5, says: /must be positive, got -500/ },
  { name: "a negative string", minor: "-500", decimal: "-5.00", says: /must be positive, got -500/ },
  {
    name: "2^63 (beyond int8)",
    minor: "9223372036854775808",
    decimal: "92233720368547758.08",
    says: /beyond the largest movement/,
  },
  {
    name: "just above the bound",
    minor: "1000000000000001",
    decimal: "10000000000000.01",
    says: /beyond the largest movement/,
  },
  {
    name: "1e21 as a JSON number",
    minor: 1e21,
    decimal: 1e21,
    says: /integer number of minor units|cannot be read exactly/,
  },
  { name: "a float", minor: 12.5, decimal: "12.345", says: /integer number of minor units|more than 2 decimal places/ },
];

describe("money that is not money is refused at parse time, naming the field", () => {
  for (const provider of PROVIDERS) {
    for (const h of hostile) {
      it(`${provider}: ${h.name}`, () => {
        const r = parse(
          provider,
          aPaymentWithMoney(provider, { amount: DECIMAL.includes(provider) ? h.decimal : h.minor }),
        );
        expect(r.kind).toBe("failed");
        if (r.kind !== "failed") return;
        expect(r.error).toContain(AMOUNT_FIELD[provider]);
        expect(r.error).toMatch(h.says);
      });
    }

    it(`${provider}: zero is ${provider === "adyen" || provider === "standard" ? "ignored (the provider really sends it)" : "refused (the provider never sends it)"}`, () => {
      const r = parse(provider, aPaymentWithMoney(provider, { amount: DECIMAL.includes(provider) ? "0.00" : 0 }));
      if (provider === "adyen" || provider === "standard") expect(r.kind).toBe("ignored");
      else
        expect(r).toMatchObject({
          kind: "failed",
          error: expect.stringMatching(
            new RegExp(`${AMOUNT_FIELD[provider].replace(".", "\\.")}.*must be positive, got 0`),
          ),
        });
    });

    for (const currency of ["xyz", "XYZ", "usd ", " USD", "US$", "", "XXX", 840]) {
      it(`${provider}: currency ${JSON.stringify(currency)} is refused`, () => {
        const r = parse(provider, aPaymentWithMoney(provider, { currency }));
        expect(r).toMatchObject({ kind: "failed", error: expect.stringContaining(CURRENCY_FIELD[provider]) });
      });
    }

    it(`${provider}: the largest amount the ledger accepts, in lower-case USD, still parses`, () => {
      const r = parse(
        provider,
        aPaymentWithMoney(provider, {
          amount: DECIMAL.includes(provider) ? "10000000000000.00" : "1000000000000000",
          currency: "usd",
        }),
      );
      expect(r).toMatchObject({ kind: "money", movements: [{ amount: 10n ** 15n, currency: "USD" }] });
    });
  }

  it("decimal providers use each currency's exponent: JPY has none, KWD three", () => {
    for (const provider of DECIMAL) {
      expect(parse(provider, aPaymentWithMoney(provider, { amount: "1500", currency: "JPY" }))).toMatchObject({
        kind: "money",
        movements: [{ amount: 1500n, currency: "JPY" }],
      });
      expect(parse(provider, aPaymentWithMoney(provider, { amount: "1500.5", currency: "JPY" }))).toMatchObject({
        kind: "failed",
        error: expect.stringContaining("more than 0 decimal places"),
      });
      expect(parse(provider, aPaymentWithMoney(provider, { amount: "1.234", currency: "KWD" }))).toMatchObject({
        kind: "money",
        movements: [{ amount: 1234n, currency: "KWD" }],
      });
    }
  });

  it("a refund of -300 is refused, not posted as a payment with its sign reversed", async () => {
    const { aStripeRefund } = await import("@/dev/testing/builders");
    const { aPaystackRefund, aPaypalRefund } = await import("@/dev/testing/provider-builders");
    expect(parse("stripe", aStripeRefund({ payment: "pi_x", amount: -300 }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("amount: amount must be positive, got -300"),
    });
    expect(parse("paystack", aPaystackRefund({ transactionReference: "ref_x", amount: "-300" }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("must be positive"),
    });
    expect(parse("paypal", aPaypalRefund({ captureId: "CAP1", value: "-3.00" }))).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("must be positive"),
    });
  });
});
