// PATCH /api/v1/tenants/{tenant}/endpoints/{provider}: an admin changes whether the
// endpoint accepts deliveries, its signature tolerance and its matching rules
// (amount tolerance in minor units, bank date lag, rule order), with a reason for
// the audit log. Provider settings (API keys, base URLs) are not taken here: the
// CLI sets them, and a browser form for credentials needs a write-only design of its own.
import { z } from "zod";
import { updateEndpointSettings } from "@/lib/admin/tenants";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

// Minor units as digits, never through a float: "5" or 5, not "0.05" or 1.5. The range
// is the domain's (its refusal names the limits); 19 digits already pass any tolerance.
// One transform rather than a union, whose refusal would say only "Invalid input".
const MINOR_UNITS = "a whole number of minor units (5 is 0.05 in a two-decimal currency)";
const MinorUnits = z.unknown().transform((v, ctx) => {
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d{1,19}$/.test(v.trim())) return BigInt(v.trim());
  ctx.addIssue({ code: "custom", message: `${MINOR_UNITS}, got ${String(JSON.stringify(v)).slice(0, 40)}` });
  return z.NEVER;
});

const EndpointChange = z
  .object({
    enabled: z.boolean().optional(),
    toleranceSeconds: z.number().int("a whole number of seconds").optional(),
    matchRules: z
      .object({
        toleranceMinor: MinorUnits.optional(),
        dateLagDays: z.number().int("a whole number of days").optional(),
        priority: z.array(z.string()).max(10).optional(),
      })
      .strict()
      .optional(),
    reason: z.string().trim().max(500).optional(),
  })
  .strict();

// The provider segment is any string here: updateEndpointSettings answers 404 unknown_provider for one Tally does not know.
export const PATCH = withTenant(
  { roles: ["admin"], params: { provider: z.string() }, body: EndpointChange },
  async ({ tenant, actor, params: { provider }, body: { reason, ...changes } }) => {
    const r = await updateEndpointSettings(tenant.slug, provider, changes, actor, reason);
    if (!r.ok) return r;
    const { enabled, toleranceSeconds, matchRules } = r.value;
    return json({ provider, enabled, toleranceSeconds, matchRules });
  },
);
