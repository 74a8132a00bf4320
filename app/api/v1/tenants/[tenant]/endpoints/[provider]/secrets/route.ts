// POST /api/v1/tenants/{tenant}/endpoints/{provider}/secrets: add a signing
// secret (generated unless pasted from the provider), optionally as a rotation
// that lets the older secrets expire after an overlap. The secret is in this
// response and nowhere else, ever.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { accessError, domainError, handled, json, jsonBody, parseInput } from "@/lib/platform/http";
import { adapterFor } from "@/lib/providers";
import { addSecret, generateSecret, secretFingerprint } from "@/lib/admin/tenants";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; provider: string }> };

const NewSecret = z.object({
  label: z.string().trim().max(100).optional(),
  /** As the provider shows it, for providers that generate their own (Stripe); omitted: Tally generates one. */
  secret: z.string().min(1).max(500).optional(),
  /** A rotation: older secrets stay valid this many hours, then expire. Omitted: they stay valid. */
  overlapHours: z.number().int().min(0).max(24 * 30).optional(),
});

export const POST = handled(async (request: Request, { params }: Params) => {
  const { tenant, provider } = await params;
  const access = await requireAccess(request, { tenant, roles: ["admin"] });
  if (!access.ok) return accessError(access);
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const input = parseInput(NewSecret, body.value);
  if (!input.ok) return input.response;
  const adapter = adapterFor(provider);
  const secret = input.value.secret ?? (adapter ? generateSecret(adapter.provider) : "");
  const r = await addSecret(tenant, provider, secret, { label: input.value.label || undefined, overlapSeconds: input.value.overlapHours === undefined ? undefined : input.value.overlapHours * 3600 }, actorOf(access.principal));
  if (!r.ok) return domainError(r);
  return json({ secretId: r.value.secretId, secret, fingerprint: secretFingerprint(secret), expiring: r.value.expiring, webhookUrl: `/api/webhooks/${tenant}/${provider}` }, { status: 201, headers: { "cache-control": "no-store" } });
});
