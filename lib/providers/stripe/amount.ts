// Stripe's amounts in Tally's units. Stripe's integer "smallest unit" is not always
// ISO 4217's minor unit (docs.stripe.com/currencies): MGA is zero-decimal at Stripe
// (ISO: 2), while ISK and UGX are sent with two decimals (×100) though ISO gives
// them none; KWD, BHD, JOD, OMR and TND are three-decimal at both. Every Stripe
// amount (webhook bodies, balance transactions, report files) goes through here,
// so one payment reads the same from any of them and from any other provider.
import { currencyExponent, toMinorUnits, type MinorUnits } from "@/lib/ledger/money";

const ZERO_DECIMAL = new Set([
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
]);
const THREE_DECIMAL = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);

/** Digits after the decimal point in Stripe's integer amounts for this currency. */
export function stripeExponent(currency: string): number {
  const c = currency.toUpperCase();
  // ISK and UGX are not in ZERO_DECIMAL: Stripe represents them as two-decimal.
  return ZERO_DECIMAL.has(c) ? 0 : THREE_DECIMAL.has(c) ? 3 : 2;
}

/** Stripe's integer amount → ISO minor units: 100000 ISK (Stripe) → 1000n; 5000 MGA (Stripe) → 500000n. */
export function fromStripeMinor(amount: bigint, currency: string): MinorUnits {
  const shift = stripeExponent(currency) - currencyExponent(currency);
  if (shift === 0) return { ok: true, value: amount };
  if (shift < 0) return { ok: true, value: amount * 10n ** BigInt(-shift) };
  const factor = 10n ** BigInt(shift);
  // Stripe requires these amounts to be whole ISO units (ISK and UGX divisible by 100); anything else is not money we can hold exactly.
  if (amount % factor !== 0n)
    return {
      ok: false,
      error: `${amount} ${currency.toUpperCase()} at Stripe is not a whole ${currency.toUpperCase()} minor unit (Stripe sends ${currency.toUpperCase()} ×${factor}); refusing to round money`,
    };
  return { ok: true, value: amount / factor };
}

/** A Stripe report's major-unit decimal ("1000.00" ISK, "5000" MGA) → ISO minor units, read at Stripe's precision. */
export function fromStripeDecimal(text: string, currency: string): MinorUnits {
  if (stripeExponent(currency) === currencyExponent(currency)) return toMinorUnits(text, currency);
  // Read at Stripe's precision, then convert: "1000.50" ISK is refused like 100050 ISK from the API.
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return { ok: false, error: `amount must be a decimal number like "10.50", got ${JSON.stringify(text)}` };
  const e = stripeExponent(currency);
  const fraction = m[3] ?? "";
  if (/[^0]/.test(fraction.slice(e)))
    return {
      ok: false,
      error: `${text} ${currency.toUpperCase()} has more than ${e} decimal places at Stripe; refusing to round money`,
    };
  const value = BigInt(m[2]! + fraction.slice(0, e).padEnd(e, "0"));
  return fromStripeMinor(m[1] === "-" ? -value : value, currency);
}
