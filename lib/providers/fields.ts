// Field readers that survive providers reformatting a payload between retries:
// a number sent as a string, null sent as "", a timestamp as text. The same
// event must parse to the same movement whichever way it was serialised.
import { z } from "zod";
import { amountProblem, decimalText, isIsoCurrency, toMinorUnits, type MinorUnits } from "@/lib/ledger/money";

/** Integer minor units from a JSON number or a string of digits; never a float. Sign and size unchecked: see amountIn. */
const integerMinorUnits = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const text = typeof v === "number" ? (Number.isSafeInteger(v) ? String(v) : "") : v.trim();
  if (!/^-?\d+$/.test(text)) {
    ctx.addIssue({
      code: "custom",
      message: `amount must be an integer number of minor units, got ${JSON.stringify(v)}`,
    });
    return z.NEVER;
  }
  return BigInt(text);
});

/**
 * The one check every parser's amounts pass (lib/ledger/money's amountProblem):
 * positive and within the ledger's bound. A refusal names the field through the
 * zod path, and fails the event at parse time, once, visibly: never retried.
 */
const amountIn = (zero: "allowed" | "refused") =>
  integerMinorUnits.transform((v, ctx) => {
    const problem = amountProblem(v, { zero });
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    return v;
  });

/** Positive integer minor units, for providers that never send a zero amount. */
export const minorUnits = amountIn("refused");

/** Integer minor units where zero is a real thing the provider sends (and the parser ignores); never negative. */
export const minorUnitsOrZero = amountIn("allowed");

/** Text that may be absent, null or "": all three mean "not given". */
export const optionalText = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined || v === "" ? undefined : String(v)));

export const requiredText = z.union([z.string().min(1), z.number()]).transform(String);

/**
 * An ISO 4217 code, in any case ("usd" as Stripe sends it), upper-cased; nothing
 * else: "xyz", "usd " (whitespace is not a reformatting any provider does) and
 * "US$" are refused, so the ledger never holds a currency that is not one.
 */
export const currencyCode = z.string().transform((v, ctx) => {
  const code = v.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !isIsoCurrency(code)) {
    ctx.addIssue({
      code: "custom",
      message: `currency must be a three-letter ISO 4217 code, got ${JSON.stringify(v)}`,
    });
    return z.NEVER;
  }
  return code;
});

/**
 * A major-unit decimal ("10.50") of a currency, exactly in its minor units (JPY 0
 * decimals, KWD 3), with the same sign and size checks as minorUnits.
 */
export function decimalMinorUnits(
  decimal: string,
  currency: string,
  zero: "allowed" | "refused" = "refused",
): MinorUnits {
  const r = toMinorUnits(decimal, currency);
  if (!r.ok) return r;
  const problem = amountProblem(r.value, { zero });
  return problem ? { ok: false, error: problem } : r;
}

/** Unix seconds (number or digits) or an ISO 8601 string. */
export const timestamp = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const date = typeof v === "number" || /^\d+$/.test(v) ? new Date(Number(v) * 1000) : new Date(v);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: "custom", message: `not a timestamp: ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return date;
});

/** Loose boolean: true/false, "true"/"false". */
export const looseBoolean = z
  .union([z.boolean(), z.enum(["true", "false"])])
  .transform((v) => v === true || v === "true");

/** Parses the body as JSON, or explains why it is not. */
export function parseJson(rawBody: Buffer): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(rawBody.toString("utf8")) };
  } catch (error) {
    return { ok: false, error: `body is not valid JSON: ${(error as Error).message}` };
  }
}

export function describeZodError(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}

/** A timestamp that may be absent, null or "". */
export const optionalTimestamp = z
  .union([z.null(), z.literal(""), z.undefined(), timestamp])
  .transform((v) => (v === null || v === "" ? undefined : v))
  .optional();

/** A major-unit decimal amount ("10.50" or 10.5) as exact text, for lib/money's toMinorUnits with its currency. */
export const decimalAmount = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const r = decimalText(v);
  if (!r.ok) {
    ctx.addIssue({ code: "custom", message: r.error });
    return z.NEVER;
  }
  return r.text;
});

/**
 * `account` from a metadata object, which some providers send as an object, a JSON
 * string of one, "" or null depending on how it was set; undefined when absent.
 */
export function metadataAccount(metadata: unknown): string | undefined {
  let value = metadata;
  if (typeof value === "string" && value.trim().startsWith("{")) {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const account = (value as Record<string, unknown>).account;
  if (typeof account === "string" && account.trim() !== "") return account.trim();
  if (typeof account === "number") return String(account);
  return undefined;
}
