// PATCH /api/v1/users/{id} {role?, tenants?, disabled?, reason?}: an admin changes a user.
import { z } from "zod";
import { withPrincipal } from "@/lib/auth/with-access";
import { ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { refuse } from "@/lib/platform/refusal";
import { updateUser } from "@/lib/admin/users";

export const dynamic = "force-dynamic";

const Change = z.object({
  role: z.enum(ROLES as [string, ...string[]]).optional(),
  tenants: z.array(z.string()).max(500).optional(),
  disabled: z.boolean().optional(),
  reason: z.string().trim().max(500).optional(),
});

export const PATCH = withPrincipal(
  { roles: ["admin"], usersOnly: true, body: Change, params: { id: z.string() } },
  async ({ actor, body, params: { id } }) => {
    // A user id is a UUID; anything else names no user (and must not reach a uuid column).
    if (!z.guid().safeParse(id).success) return refuse("not_found", `No user ${id}`);
    const r = await updateUser(id, { ...body, reason: body.reason || null }, actor);
    return r.ok ? json({ user: r.value }) : r;
  },
);
