// GET /api/v1/tenants/{tenant}/alerts/channels: where this tenant's alerts go
// (webhook and Slack URLs shown as their origin only). POST {kind, name, target}:
// add one; the URL is stored sealed and never returned. Admins only; audited.
import { z } from "zod";
import { addChannel, CHANNEL_KINDS, listChannels } from "@/lib/alerts/channels";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

const NewChannel = z
  .object({
    kind: z.enum(CHANNEL_KINDS),
    name: z.string().max(100),
    /** EMAIL: address(es), comma-separated; WEBHOOK, SLACK: the URL to POST to. */
    target: z.string().min(1, "Give the address(es) or the URL").max(2000),
  })
  .strict();

export const GET = withTenant({ roles: ["admin"] }, async ({ tenant }) =>
  json({ channels: await listChannels(tenant.id) }),
);

export const POST = withTenant({ roles: ["admin"], body: NewChannel }, async ({ tenant, actor, body }) => {
  const r = await addChannel(tenant.id, body, actor);
  return r.ok ? json(r.value, { status: 201 }) : r;
});
