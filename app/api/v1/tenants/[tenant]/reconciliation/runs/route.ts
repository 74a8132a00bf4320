// GET /api/v1/tenants/{tenant}/reconciliation/runs: runs, newest first (?before=).
// POST {provider, from, to?}: reconcile whole UTC days [from, to] against the
// provider's settlement API, now; audited as recon.run with the caller as actor.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES, SECTION_ROLES } from "@/lib/auth/roles";
import { Provider } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { bigintId, calendarDay } from "@/lib/platform/query-params";
import { listRuns } from "@/lib/recon/runs";
import { startReconciliation } from "@/lib/recon/start";

export const dynamic = "force-dynamic";

const DAY = 86_400_000;
const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  before: z.preprocess(blank, bigintId.optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(100).default(25)),
});

export const GET = withTenant({ roles: SECTION_ROLES.reconciliation, query: Query }, async ({ tenant, query }) =>
  json(await listRuns(tenant.id, { limit: query.limit, beforeId: query.before }), {
    headers: { "cache-control": "no-store" },
  }),
);

const NewRun = z
  .object({
    provider: z.enum(Object.values(Provider) as [Provider, ...Provider[]]),
    from: calendarDay,
    to: calendarDay.optional(),
  })
  .transform((v) => ({
    provider: v.provider,
    window: { from: new Date(`${v.from}T00:00:00Z`), to: new Date(Date.parse(`${v.to ?? v.from}T00:00:00Z`) + DAY) },
  }))
  .refine((v) => v.window.from < v.window.to, { message: "from must be on or before to", path: ["to"] })
  .refine((v) => v.window.to.getTime() - v.window.from.getTime() <= 93 * DAY, {
    message: "at most 93 days per run",
    path: ["to"],
  });

export const POST = withTenant({ roles: ACTION_ROLES.reconcile, body: NewRun }, async ({ tenant, actor, body }) => {
  const r = await startReconciliation({
    tenantId: tenant.id,
    provider: body.provider,
    window: body.window,
    source: { kind: "api" },
    actor,
  });
  return r.ok ? json(r.value, { status: 201 }) : r;
});
