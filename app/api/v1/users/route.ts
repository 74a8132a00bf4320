// GET /api/v1/users: every user (admins). POST: create one; a generated
// password is in this response once and stored only as an Argon2id hash.
import { z } from "zod";
import { withPrincipal } from "@/lib/auth/with-access";
import { ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { createUser, listUsers } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

const ADMIN = { roles: ["admin"], usersOnly: true } as const;

export const GET = withPrincipal(ADMIN, async () => json({ users: await listUsers() }));

const NewUser = z.object({
  email: z.string().trim().min(1).max(320),
  name: z.string().trim().max(200).optional(),
  role: z.enum(ROLES as [string, ...string[]]),
  tenants: z.array(z.string()).max(500).default([]),
});

export const POST = withPrincipal({ ...ADMIN, body: NewUser }, async ({ actor, body }) => {
  const r = await createUser({ ...body, name: body.name || undefined }, actor);
  if (!r.ok) return r;
  return json(
    { user: { id: r.value.id, email: r.value.email }, password: r.value.password },
    { status: 201, headers: { "cache-control": "no-store" } },
  );
});
