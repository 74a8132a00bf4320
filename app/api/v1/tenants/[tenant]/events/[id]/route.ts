// GET /api/v1/tenants/{tenant}/events/{id}: one event, its body as received (UTF-8
// text when it is, base64 always) and its headers, with signatures redacted (which
// check passed is said instead: lib/views/event-signatures.ts), claims, postings and receipts.
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { shownDelivery } from "@/lib/views/event-signatures";
import { getEvent } from "@/lib/views/events";
import { accessError, handled, json, jsonError, parseInput } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: SECTION_ROLES.events });
  if (!access.ok) return accessError(access);
  const eventId = parseInput(bigintId, id);
  if (!eventId.ok) return eventId.response;
  const detail = await getEvent(access.tenant.id, eventId.value);
  if (!detail) return jsonError(404, "not_found", `No event ${id} in tenant ${tenant}`);
  const { rawBody: _, headers: __, ...event } = detail.event;
  const shown = shownDelivery(detail.event);
  return json({ event: { ...event, headers: shown.headers, signature: shown.signature, body: shown.body }, claims: detail.claims, duplicates: detail.duplicates });
});
