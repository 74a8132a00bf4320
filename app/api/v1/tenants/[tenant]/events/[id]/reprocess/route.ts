// POST /api/v1/tenants/{tenant}/events/{id}/reprocess {reason}: send a FAILED
// event, or its stuck or FAILED claims, back through the normal worker path.
// Audited with the reason; DONE work is never redone.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { reprocessEvent } from "@/lib/pipeline/reprocess";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

const Reprocess = z.object({ reason: z.string().trim().min(3, "Say why it is reprocessed (at least 3 characters)").max(500) });

export const POST = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: ACTION_ROLES.reprocess });
  if (!access.ok) return accessError(access);
  const eventId = parseInput(bigintId, id);
  if (!eventId.ok) return eventId.response;
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Reprocess, body.value);
  if (!input.ok) return input.response;
  const r = await reprocessEvent(access.tenant.id, eventId.value, actorOf(access.principal), input.value.reason, config().TALLY_STALE_CLAIM_MS);
  if (!r.ok) return domainError(r);
  return json(r.value, { status: 202 });
});
