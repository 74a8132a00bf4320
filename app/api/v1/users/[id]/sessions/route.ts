// DELETE /api/v1/users/{id}/sessions {reason?}: an admin signs a user out everywhere.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { revokeSessionsOf } from "@/lib/auth/sessions";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

const Revocation = z.object({ reason: z.string().trim().max(500).optional() });

export const DELETE = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { roles: ["admin"], usersOnly: true });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Revocation, body.value);
  if (!input.ok) return input.response;
  const { id } = await params;
  if (!/^[0-9a-f-]{36}$/i.test(id)) return domainError({ reason: "not_found", message: `No user ${id}` });
  const r = await revokeSessionsOf(id, actorOf(access.principal), input.value.reason || null);
  if (!r.ok) return domainError(r);
  return json(r.value);
});
