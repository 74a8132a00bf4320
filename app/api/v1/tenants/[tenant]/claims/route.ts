// GET /api/v1/tenants/{tenant}/claims: what is stuck (claims held past the
// stale-claim threshold, FAILED claims, events that failed to parse), oldest first.
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { json } from "@/lib/platform/http";
import { listStuck } from "@/lib/views/stuck-claims";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.claims }, async ({ tenant }) => {
  const staleMs = config().TALLY_STALE_CLAIM_MS;
  return json({ staleMs, items: await listStuck(tenant.id, staleMs) }, { headers: { "cache-control": "no-store" } });
});
