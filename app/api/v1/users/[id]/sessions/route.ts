// DELETE /api/v1/users/{id}/sessions {reason?}: an admin signs a user out everywhere.
import { z } from "zod";
import { withPrincipal } from "@/lib/auth/with-access";
import { revokeSessionsOf } from "@/lib/auth/sessions";
import { json } from "@/lib/platform/http";
import { refuse } from "@/lib/platform/refusal";

export const dynamic = "force-dynamic";

const Revocation = z.object({ reason: z.string().trim().max(500).optional() });

export const DELETE = withPrincipal(
  { roles: ["admin"], usersOnly: true, body: Revocation, params: { id: z.string() } },
  async ({ actor, body, params: { id } }) => {
    // A user id is a UUID; anything else names no user (and must not reach a uuid column).
    if (!z.guid().safeParse(id).success) return refuse("not_found", `No user ${id}`);
    const r = await revokeSessionsOf(id, actor, body.reason || null);
    return r.ok ? json(r.value) : r;
  },
);
