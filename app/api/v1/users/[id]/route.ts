// PATCH /api/v1/users/{id} {role?, tenants?, disabled?, reason?}: an admin changes a user.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { ROLES } from "@/lib/auth/roles";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { updateUser } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

const Change = z.object({
  role: z.enum(ROLES as [string, ...string[]]).optional(),
  tenants: z.array(z.string()).max(500).optional(),
  disabled: z.boolean().optional(),
  reason: z.string().trim().max(500).optional(),
});

export const PATCH = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { roles: ["admin"], usersOnly: true });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(Change, body.value);
  if (!input.ok) return input.response;
  const { id } = await params;
  if (!/^[0-9a-f-]{36}$/i.test(id)) return domainError({ reason: "not_found", message: `No user ${id}` });
  const r = await updateUser(id, { ...input.value, reason: input.value.reason || null }, actorOf(access.principal));
  if (!r.ok) return domainError(r);
  return json({ user: r.value });
});
