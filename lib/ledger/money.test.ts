import { describe, expect, it } from "vitest";
import { currencyExponent, decimalText, toDecimalText, toMinorUnits } from "@/lib/ledger/money";

const minor = (decimal: string, currency: string) => {
  const r = toMinorUnits(decimal, currency);
  return r.ok ? r.value : r.error;
};

describe("toMinorUnits", () => {
  it("converts two-decimal currencies exactly, however many decimals are written", () => {
    expect(minor("10.50", "EUR")).toBe(1050n);
    expect(minor("10.5", "EUR")).toBe(1050n);
    expect(minor("10", "usd")).toBe(1000n);
    expect(minor("0.01", "NGN")).toBe(1n);
    expect(minor("0", "GBP")).toBe(0n);
  });

  it("does not go through a float (0.1 + 0.2 style errors, large amounts)", () => {
    expect(minor("0.29", "USD")).toBe(29n); // 0.29 * 100 = 28.999999999999996 as a double
    expect(minor("1.15", "USD")).toBe(115n); // 1.15 * 100 = 114.99999999999999
    expect(minor("92233720368547758.07", "USD")).toBe(9223372036854775807n);
  });

  it("uses ISO 4217 exponents: 0 for JPY, KRW, XOF, UGX; 3 for BHD, KWD, OMR, JOD, TND", () => {
    for (const c of ["JPY", "KRW", "XOF", "XAF", "UGX", "RWF", "VND", "CLP"])
      expect([c, currencyExponent(c)]).toEqual([c, 0]);
    for (const c of ["BHD", "KWD", "OMR", "JOD", "TND", "IQD", "LYD"]) expect([c, currencyExponent(c)]).toEqual([c, 3]);
    for (const c of ["USD", "EUR", "NGN", "GHS", "KES", "ZAR", "HUF"]) expect([c, currencyExponent(c)]).toEqual([c, 2]);
    expect(minor("1500", "JPY")).toBe(1500n);
    expect(minor("1500.00", "JPY")).toBe(1500n);
    expect(minor("1.234", "KWD")).toBe(1234n);
    expect(minor("1.2", "BHD")).toBe(1200n);
    expect(minor("7", "OMR")).toBe(7000n);
  });

  it("keeps trailing zeros beyond the exponent but refuses to round anything else", () => {
    expect(minor("10.500", "EUR")).toBe(1050n);
    expect(minor("10.505", "EUR")).toContain("more than 2 decimal places; refusing to round");
    expect(minor("1500.5", "JPY")).toContain("more than 0 decimal places");
    expect(minor("1.2345", "KWD")).toContain("more than 3 decimal places");
  });

  it("handles negative amounts and surrounding whitespace", () => {
    expect(minor("-3.10", "EUR")).toBe(-310n);
    expect(minor(" 12.30 ", "EUR")).toBe(1230n);
  });

  it("refuses what is not a plain decimal or not a currency code", () => {
    for (const bad of ["", "abc", "1,000.00", "1e3", ".5", "5.", "+5", "0x10", "1 000", "NaN"]) {
      expect(minor(bad, "EUR")).toContain("must be a decimal number");
    }
    expect(minor("1.00", "EURO")).toContain("three-letter ISO 4217 code");
  });
});

describe("decimalText", () => {
  it("passes strings through and turns JSON numbers back into their exact text", () => {
    expect(decimalText("10.50")).toEqual({ ok: true, text: "10.50" });
    expect(decimalText(10.5)).toEqual({ ok: true, text: "10.5" });
    expect(decimalText(JSON.parse("1000.10"))).toEqual({ ok: true, text: "1000.1" });
    expect(decimalText(0.05)).toEqual({ ok: true, text: "0.05" });
    expect(decimalText(123456789012.34)).toEqual({ ok: true, text: "123456789012.34" });
  });

  it("refuses numbers a double cannot have carried exactly", () => {
    expect(decimalText(JSON.parse("12345678901234567.89"))).toMatchObject({
      ok: false,
      error: expect.stringContaining("must be sent as a string"),
    });
    expect(decimalText(1e21).ok).toBe(false);
    expect(decimalText(Number.NaN).ok).toBe(false);
  });
});

describe("toDecimalText", () => {
  it("writes minor units as the provider's major-unit decimal, with the currency's exponent", () => {
    expect(toDecimalText(150075n, "NGN")).toBe("1500.75");
    expect(toDecimalText(5n, "USD")).toBe("0.05");
    expect(toDecimalText(1500n, "JPY")).toBe("1500");
    expect(toDecimalText(1234n, "KWD")).toBe("1.234");
    expect(toDecimalText(-310n, "EUR")).toBe("-3.10");
    expect(toDecimalText(0n, "GBP")).toBe("0.00");
  });

  it("round-trips through toMinorUnits, also by way of a JSON number", () => {
    for (const [value, currency] of [
      [1n, "USD"],
      [99n, "EUR"],
      [250_000n, "NGN"],
      [123_456_789n, "KES"],
      [60_000n, "UGX"],
      [400_000n, "KWD"],
      [9_007_199_254_740n, "USD"],
    ] as const) {
      expect(minor(toDecimalText(value, currency), currency)).toBe(value);
      const viaNumber = decimalText(JSON.parse(JSON.stringify(Number(toDecimalText(value, currency)))));
      expect(viaNumber.ok && minor(viaNumber.text, currency)).toBe(value);
    }
  });
});
