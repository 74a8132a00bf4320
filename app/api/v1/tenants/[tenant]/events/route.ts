// GET /api/v1/tenants/{tenant}/events: search raw events, newest first, paginated by ?before=.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { searchEvents } from "@/lib/views/events";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { EventQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.events, query: EventQuery }, async ({ tenant, query }) => {
  const { before, status, ...filter } = query;
  return json(
    await searchEvents({
      tenantId: tenant.id,
      ...filter,
      status: status as RawEventStatus | undefined,
      beforeId: before,
    }),
  );
});
