// GET /api/v1/users: every user (admins). POST: create one; a generated
// password is in this response once and stored only as an Argon2id hash.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { ROLES } from "@/lib/auth/roles";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { createUser, listUsers } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

const ADMIN = { roles: ["admin"], usersOnly: true } as const;

export const GET = handled(async (request: Request) => {
  const access = await requireAccess(request, ADMIN);
  if (!access.ok) return accessError(access);
  return json({ users: await listUsers() });
});

const NewUser = z.object({
  email: z.string().trim().min(1).max(320),
  name: z.string().trim().max(200).optional(),
  role: z.enum(ROLES as [string, ...string[]]),
  tenants: z.array(z.string()).max(500).default([]),
});

export const POST = handled(async (request: Request) => {
  const access = await requireAccess(request, ADMIN);
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(NewUser, body.value);
  if (!input.ok) return input.response;
  const r = await createUser({ ...input.value, name: input.value.name || undefined }, actorOf(access.principal));
  if (!r.ok) return domainError(r);
  return json({ user: { id: r.value.id, email: r.value.email }, password: r.value.password }, { status: 201, headers: { "cache-control": "no-store" } });
});
