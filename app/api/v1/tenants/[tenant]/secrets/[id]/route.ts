// DELETE /api/v1/tenants/{tenant}/secrets/{id} {reason}: revoke a signing secret now.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { revokeSecret } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

const Revocation = z.object({ reason: z.string().trim().min(1, "Say why the secret is revoked").max(500) });

export const DELETE = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: ["admin"] });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Revocation, body.value);
  if (!input.ok) return input.response;
  const r = await revokeSecret(id, input.value.reason, actorOf(access.principal), { tenantId: access.tenant.id });
  if (!r.ok) return domainError(r);
  return json({ revoked: id });
});
