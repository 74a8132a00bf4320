// The one money formatter: bigint minor units + ISO currency → text, with the
// currency's own number of decimals, never through floating point.
// Customer accounts are credit-normal: the ledger stores their balance as a
// credit (negative), which means "we owe the customer"; people read that as a
// positive amount, so their balances are displayed negated (−amount).

export type Money = { amount: bigint; currency: string };

function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** "1250" USD → "$12.50"; "-1250" → "-$12.50"; JPY has no decimals. */
export function formatMoney(amount: bigint | string, currency: string): string {
  const minor = typeof amount === "bigint" ? amount : BigInt(amount);
  const digits = minorDigits(currency);
  const negative = minor < 0n;
  const abs = (negative ? -minor : minor).toString().padStart(digits + 1, "0");
  const decimal = digits ? `${abs.slice(0, -digits)}.${abs.slice(-digits)}` : abs;
  try {
    // Intl formats decimal strings exactly (no float rounding).
    const f = new Intl.NumberFormat("en", {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    return f.format(`${negative ? "-" : ""}${decimal}` as unknown as number);
  } catch {
    return `${negative ? "-" : ""}${decimal} ${currency}`;
  }
}

/** A balance as people read it: customer (credit-normal) balances negated. */
export function displayBalance(kind: string, amount: bigint | string): bigint {
  const a = typeof amount === "bigint" ? amount : BigInt(amount);
  return kind === "CUSTOMER" ? -a : a;
}

/** A ledger entry as debit or credit column text. */
export function entrySide(amount: bigint | string): "debit" | "credit" {
  return (typeof amount === "bigint" ? amount : BigInt(amount)) >= 0n ? "debit" : "credit";
}
