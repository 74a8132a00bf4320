// PATCH /api/v1/tenants/{tenant}/alerts/channels/{id} {enabled, reason}: turn a
// channel off or on. DELETE {reason}: remove it with whatever it still had queued.
// Admins only; audited. An unknown id, or another tenant's, is 404 not_found.
import { z } from "zod";
import { removeChannel, setChannelEnabled } from "@/lib/alerts/channels";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";
import { auditReason } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

const Toggle = z.object({ enabled: z.boolean(), reason: auditReason("the channel changes") }).strict();
const Removal = z.object({ reason: auditReason("the channel is removed") }).strict();

export const PATCH = withTenant(
  { roles: ["admin"], params: { id: z.string().uuid() }, body: Toggle },
  async ({ tenant, actor, params, body }) => {
    const r = await setChannelEnabled(tenant.id, params.id, body.enabled, actor, body.reason);
    return r.ok ? json(r.value) : r;
  },
);

export const DELETE = withTenant(
  { roles: ["admin"], params: { id: z.string().uuid() }, body: Removal },
  async ({ tenant, actor, params, body }) => {
    const r = await removeChannel(tenant.id, params.id, actor, body.reason);
    return r.ok ? json({ removed: r.value.id }) : r;
  },
);
