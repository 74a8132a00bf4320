// GET /api/v1/tenants/{tenant}/discrepancies?from&to[&provider]: the daily
// discrepancy history for the trend chart, with the 30-day verdict.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { Provider } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { calendarDay } from "@/lib/platform/query-params";
import { discrepancyHistory, trendSummary } from "@/lib/recon/trend";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    from: calendarDay.optional(),
    to: calendarDay.optional(),
    provider: z.enum(Object.values(Provider) as [string, ...string[]]).optional(),
  })
  .transform((q) => {
    const to = q.to
      ? new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000)
      : new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
    const from = q.from ? new Date(`${q.from}T00:00:00Z`) : new Date(to.getTime() - 90 * 86_400_000);
    return { from, to, provider: q.provider as Provider | undefined };
  })
  .refine((q) => q.from < q.to, { message: "from must be on or before to", path: ["from"] });

export const GET = withTenant({ roles: SECTION_ROLES.overview, query: Query }, async ({ tenant, query }) => {
  const [days, trend] = await Promise.all([
    discrepancyHistory(tenant.id, query.from, query.to, query.provider),
    trendSummary(tenant.id),
  ]);
  return json({
    from: query.from.toISOString().slice(0, 10),
    to: new Date(query.to.getTime() - 86_400_000).toISOString().slice(0, 10),
    days,
    trend,
  });
});
