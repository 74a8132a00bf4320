// Money as Tally keeps it: bigint minor units of an ISO 4217 currency. Providers
// that speak major-unit decimals ("10.50") are converted here, exactly, by string.

/**
 * ISO 4217 minor-unit exponents that differ from 2. Providers sometimes disagree
 * with ISO (PayPal sends HUF and TWD without decimals); that is harmless as long
 * as every amount in one currency goes through this one table.
 */
const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Digits after the decimal point in the currency's minor unit. */
export function currencyExponent(currency: string): number {
  return EXPONENTS[currency.toUpperCase()] ?? 2;
}

export type MinorUnits = { ok: true; value: bigint } | { ok: false; error: string };

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * "10.5" EUR → 1050n; "1000" JPY → 1000n; "1.234" KWD → 1234n. More decimals
 * than the currency has are accepted only when they are zeros ("10.500" EUR):
 * rounding money silently is never right, so "10.505" EUR is an error.
 */
export function toMinorUnits(decimal: string, currency: string): MinorUnits {
  if (!/^[A-Za-z]{3}$/.test(currency))
    return { ok: false, error: `currency must be a three-letter ISO 4217 code, got ${JSON.stringify(currency)}` };
  const match = DECIMAL.exec(decimal.trim());
  if (!match)
    return { ok: false, error: `amount must be a decimal number like "10.50", got ${JSON.stringify(decimal)}` };
  const [, sign, whole, fraction = ""] = match;
  const exponent = currencyExponent(currency);
  const kept = fraction.slice(0, exponent);
  if (/[^0]/.test(fraction.slice(exponent))) {
    return {
      ok: false,
      error: `${decimal} ${currency.toUpperCase()} has more than ${exponent} decimal place${exponent === 1 ? "" : "s"}; refusing to round money`,
    };
  }
  const value = BigInt(whole! + kept.padEnd(exponent, "0"));
  return { ok: true, value: sign === "-" ? -value : value };
}

/**
 * The decimal text of an amount read from JSON. A JSON number has already been
 * through a double; up to 15 significant digits its shortest form is exactly the
 * text that was sent, beyond that it may not be, so it is refused rather than guessed.
 */
export function decimalText(value: number | string): { ok: true; text: string } | { ok: false; error: string } {
  if (typeof value === "string") return { ok: true, text: value.trim() };
  const text = String(value);
  const digits = text.replace(/^-/, "").replace(".", "").replace(/^0+/, "");
  if (!Number.isFinite(value) || /e/i.test(text) || digits.length > 15) {
    return {
      ok: false,
      error: `amount ${text} cannot be read exactly from a JSON number; it must be sent as a string`,
    };
  }
  return { ok: true, text };
}

/**
 * The major-unit decimal text a provider puts on the wire for an amount in minor
 * units: 150075n NGN → "1500.75", 1500n JPY → "1500", 1234n KWD → "1.234".
 * The inverse of toMinorUnits, by string, so the round trip is exact.
 */
export function toDecimalText(minor: bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  const digits = (minor < 0n ? -minor : minor).toString().padStart(exponent + 1, "0");
  const whole = digits.slice(0, digits.length - exponent);
  const text = exponent === 0 ? whole : `${whole}.${digits.slice(digits.length - exponent)}`;
  return minor < 0n ? `-${text}` : text;
}

/**
 * The largest amount one movement may carry: 10^15 minor units (ten trillion
 * dollars; ~40 billion dollars in VND, which has no minor unit). The ledger's
 * columns are int8 (at most 2^63 − 1 ≈ 9.2 × 10^18), and a balance is a sum of
 * entries: with every entry at most 10^15, an account can take 9,223 of the
 * largest possible movements before its balance could overflow, where with
 * 2^63 per entry a single second one would. It is also below 2^53, so an amount
 * sent as a JSON number is exact up to the bound.
 */
export const MAX_MINOR_UNITS = 10n ** 15n;

/** Every ISO 4217 code the runtime knows (Node's ICU list: active codes, no XXX/XTS test codes). */
const ISO_CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** Whether an upper-case three-letter code is an ISO 4217 currency. */
export function isIsoCurrency(code: string): boolean {
  return ISO_CURRENCIES.has(code);
}

/**
 * Why an amount cannot be a movement's, or null when it can: money moves in
 * positive amounts (a refund is a kind, never a negative payment), and within
 * MAX_MINOR_UNITS. `zero: "allowed"` for providers that really send zero
 * (Adyen's zero-value authorisations); the parser then ignores it.
 */
export function amountProblem(value: bigint, o: { zero: "allowed" | "refused" } = { zero: "refused" }): string | null {
  if (value < 0n) return `amount must be positive, got ${value} (a refund is its own event, never a negative amount)`;
  if (value === 0n && o.zero === "refused")
    return "amount must be positive, got 0 (this provider never sends a zero amount)";
  if (value > MAX_MINOR_UNITS)
    return `amount ${value} is beyond the largest movement the ledger accepts (${MAX_MINOR_UNITS} minor units)`;
  return null;
}
