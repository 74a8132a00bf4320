// POST /api/v1/tenants/{tenant}/alerts/channels/{id}/test: send a test
// notification now. 200 when the receiver took it; 502 delivery_failed with the
// receiver's own answer when it did not. Admins only; audited.
import { z } from "zod";
import { tryChannel } from "@/lib/alerts/try-channel";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  { roles: ["admin"], params: { id: z.string().uuid() } },
  async ({ tenant, actor, params }) => {
    const r = await tryChannel(tenant, params.id, actor);
    return r.ok ? json(r.value) : r;
  },
);
