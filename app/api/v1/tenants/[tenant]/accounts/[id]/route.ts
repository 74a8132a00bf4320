// GET /api/v1/tenants/{tenant}/accounts/{id}: one account and its balances.
import { withTenant } from "@/lib/auth/with-access";
import { getAccount } from "@/lib/ledger/accounts";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.ledger, params: { id: bigintId } }, async ({ tenant, params }) => {
  const account = await getAccount(tenant.id, params.id);
  if (!account) return jsonError(404, "not_found", `No account ${params.id} in tenant ${tenant.slug}`);
  return json({ account });
});
