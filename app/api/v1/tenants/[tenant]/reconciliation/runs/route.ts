// GET /api/v1/tenants/{tenant}/reconciliation/runs: runs, newest first (?before=).
// POST {provider, from, to?}: reconcile whole UTC days [from, to] against the
// provider's settlement API, now; audited as recon.run with the caller as actor.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES, SECTION_ROLES } from "@/lib/auth/roles";
import { Provider } from "@/lib/generated/prisma/enums";
import { accessError, domainError, handled, json, jsonBody, parseInput, queryOf } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { listRuns } from "@/lib/recon/runs";
import { startReconciliation } from "@/lib/recon/start";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

const DAY = 86_400_000;
const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({ before: z.preprocess(blank, bigintId.optional()), limit: z.preprocess(blank, z.coerce.number().int().min(1).max(100).default(25)) });

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.reconciliation });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  return json(await listRuns(access.tenant.id, { limit: q.value.limit, beforeId: q.value.before }), { headers: { "cache-control": "no-store" } });
});

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date, YYYY-MM-DD").refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)), "is not a calendar date");
const NewRun = z
  .object({ provider: z.enum(Object.values(Provider) as [Provider, ...Provider[]]), from: day, to: day.optional() })
  .transform((v) => ({ provider: v.provider, window: { from: new Date(`${v.from}T00:00:00Z`), to: new Date(Date.parse(`${v.to ?? v.from}T00:00:00Z`) + DAY) } }))
  .refine((v) => v.window.from < v.window.to, { message: "from must be on or before to", path: ["to"] })
  .refine((v) => v.window.to.getTime() - v.window.from.getTime() <= 93 * DAY, { message: "at most 93 days per run", path: ["to"] });

export const POST = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: ACTION_ROLES.reconcile });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(NewRun, body.value);
  if (!input.ok) return input.response;
  const r = await startReconciliation({ tenantId: access.tenant.id, provider: input.value.provider, window: input.value.window, source: { kind: "api" }, actor: actorOf(access.principal) });
  if (!r.ok) return domainError(r);
  return json(r.value, { status: 201 });
});
