// GET /api/v1/tenants/{tenant}/claims: what is stuck (claims held past the
// stale-claim threshold, FAILED claims, events that failed to parse), oldest first.
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { accessError, handled, json } from "@/lib/platform/http";
import { listStuck } from "@/lib/views/stuck-claims";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.claims });
  if (!access.ok) return accessError(access);
  const staleMs = config().TALLY_STALE_CLAIM_MS;
  return json({ staleMs, items: await listStuck(access.tenant.id, staleMs) }, { headers: { "cache-control": "no-store" } });
});
