// A confirming provider's endpoint settings (API base URL, credentials), read with
// the confirmer's schema. A setting missing or malformed is "not_configured", naming
// each problem: the claim then fails visibly instead of posting unconfirmed money.
import type { z } from "zod";
import type { ConfirmResult } from "@/lib/providers/types";

export function confirmSettings<T>(
  schema: z.ZodType<T>,
  raw: Record<string, unknown>,
): { ok: true; value: T } | Extract<ConfirmResult, { ok: false }> {
  const parsed = schema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, reason: "not_configured", message: parsed.error.issues.map((i) => i.message).join("; ") };
}
