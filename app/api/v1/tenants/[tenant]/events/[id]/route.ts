// GET /api/v1/tenants/{tenant}/events/{id}: one event, its body as received (UTF-8
// text when it is, base64 always; once removed after the tenant's retention, its sha256
// and when) and its headers, with signatures redacted (which
// check passed is said instead: lib/views/event-signatures.ts), claims, postings and receipts.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { shownDelivery } from "@/lib/views/event-signatures";
import { getEvent } from "@/lib/views/events";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.events, params: { id: bigintId } }, async ({ tenant, params }) => {
  const detail = await getEvent(tenant.id, params.id);
  if (!detail) return jsonError(404, "not_found", `No event ${params.id} in tenant ${tenant.slug}`);
  const { rawBody: _, headers: __, bodySha256: ___, ...event } = detail.event;
  const shown = shownDelivery(detail.event);
  return json({
    event: { ...event, headers: shown.headers, signature: shown.signature, body: shown.body },
    claims: detail.claims,
    duplicates: detail.duplicates,
  });
});
