// Field readers that survive providers reformatting a payload between retries:
// a number sent as a string, null sent as "", a timestamp as text. The same
// event must parse to the same movement whichever way it was serialised.
import { z } from "zod";
import { decimalText } from "@/lib/ledger/money";

/** Integer minor units from a JSON number or a string of digits; never a float. */
export const minorUnits = z
  .union([z.number(), z.string()])
  .transform((v, ctx) => {
    const text = typeof v === "number" ? (Number.isSafeInteger(v) ? String(v) : "") : v.trim();
    if (!/^-?\d+$/.test(text)) {
      ctx.addIssue({ code: "custom", message: `amount must be an integer number of minor units, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return BigInt(text);
  });

/** Text that may be absent, null or "": all three mean "not given". */
export const optionalText = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined || v === "" ? undefined : String(v)));

export const requiredText = z.union([z.string().min(1), z.number()]).transform(String);

export const currencyCode = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{3}$/, "currency must be a three-letter ISO 4217 code")
  .transform((v) => v.toUpperCase());

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
export const looseBoolean = z.union([z.boolean(), z.enum(["true", "false"])]).transform((v) => v === true || v === "true");

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
