// GET /api/v1/tenants/{tenant}/discrepancies?from&to[&provider]: the daily
// discrepancy history for the trend chart, with the 30-day verdict.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { Provider } from "@/lib/generated/prisma/enums";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { discrepancyHistory, trendSummary } from "@/lib/recon/trend";

export const dynamic = "force-dynamic";

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date, YYYY-MM-DD");
const Query = z
  .object({
    from: day.optional(),
    to: day.optional(),
    provider: z.enum(Object.values(Provider) as [string, ...string[]]).optional(),
  })
  .transform((q) => {
    const to = q.to ? new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000) : new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
    const from = q.from ? new Date(`${q.from}T00:00:00Z`) : new Date(to.getTime() - 90 * 86_400_000);
    return { from, to, provider: q.provider as Provider | undefined };
  })
  .refine((q) => q.from < q.to, { message: "from must be on or before to", path: ["from"] });

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.overview });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  const [days, trend] = await Promise.all([discrepancyHistory(access.tenant.id, q.value.from, q.value.to, q.value.provider), trendSummary(access.tenant.id)]);
  return json({ from: q.value.from.toISOString().slice(0, 10), to: new Date(q.value.to.getTime() - 86_400_000).toISOString().slice(0, 10), days, trend });
});
