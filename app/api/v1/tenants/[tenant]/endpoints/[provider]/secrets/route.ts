// POST /api/v1/tenants/{tenant}/endpoints/{provider}/secrets: add a signing
// secret (generated unless pasted from the provider), optionally as a rotation
// that lets the older secrets expire after an overlap. The secret is in this
// response and nowhere else, ever.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { json } from "@/lib/platform/http";
import { adapterFor } from "@/lib/providers";
import { addSecret, generateSecret, secretFingerprint } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

const NewSecret = z.object({
  label: z.string().trim().max(100).optional(),
  /** As the provider shows it, for providers that generate their own (Stripe); omitted: Tally generates one. */
  secret: z.string().min(1).max(500).optional(),
  /** A rotation: older secrets stay valid this many hours, then expire. Omitted: they stay valid. */
  overlapHours: z
    .number()
    .int()
    .min(0)
    .max(24 * 30)
    .optional(),
});

// The provider segment is any string here: addSecret answers 404 unknown_provider for one Tally does not know.
export const POST = withTenant(
  { roles: ["admin"], params: { provider: z.string() }, body: NewSecret },
  async ({ tenant, actor, params: { provider }, body }) => {
    const adapter = adapterFor(provider);
    const secret = body.secret ?? (adapter ? generateSecret(adapter.provider) : "");
    const r = await addSecret(
      tenant.slug,
      provider,
      secret,
      {
        label: body.label || undefined,
        overlapSeconds: body.overlapHours === undefined ? undefined : body.overlapHours * 3600,
      },
      actor,
    );
    if (!r.ok) return r;
    return json(
      {
        secretId: r.value.secretId,
        secret,
        fingerprint: secretFingerprint(secret),
        expiring: r.value.expiring,
        webhookUrl: `/api/webhooks/${tenant.slug}/${provider}`,
      },
      { status: 201, headers: { "cache-control": "no-store" } },
    );
  },
);
