// GET /api/v1/tenants/{tenant}/events/{id}: one event, its body exactly as
// received (UTF-8 text when it is, base64 always), claims, postings and receipts.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { bodyAsText, getEvent } from "@/lib/views/events";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.events, params: { id: bigintId } }, async ({ tenant, params }) => {
  const detail = await getEvent(tenant.id, params.id);
  if (!detail) return jsonError(404, "not_found", `No event ${params.id} in tenant ${tenant.slug}`);
  const { rawBody, ...event } = detail.event;
  const bytes = Buffer.from(rawBody);
  return json({ event: { ...event, body: { text: bodyAsText(bytes), base64: bytes.toString("base64"), bytes: bytes.length } }, claims: detail.claims, duplicates: detail.duplicates });
});
