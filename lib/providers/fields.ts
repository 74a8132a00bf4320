// Field readers that survive providers reformatting a payload between retries:
// a number sent as a string, null sent as "", a timestamp as text. The same
// event must parse to the same movement whichever way it was serialised.
import { z } from "zod";

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
  .union([z.string(), z.number(), z.null(), z.undefined()])
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
