// GET /api/v1/tenants/{tenant}/events: search raw events, newest first, paginated by ?before=.
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { searchEvents } from "@/lib/views/events";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { EventQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.events });
  if (!access.ok) return accessError(access);
  const q = parseInput(EventQuery, queryOf(request));
  if (!q.ok) return q.response;
  const { before, status, ...filter } = q.value;
  const page = await searchEvents({ tenantId: access.tenant.id, ...filter, status: status as RawEventStatus | undefined, beforeId: before });
  return json(page);
});
