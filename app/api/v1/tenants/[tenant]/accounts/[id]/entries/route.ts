// GET /api/v1/tenants/{tenant}/accounts/{id}/entries: the account's ledger entries with their postings.
import { withTenant } from "@/lib/auth/with-access";
import { getAccount, listEntries } from "@/lib/ledger/accounts";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId, EntryQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: SECTION_ROLES.ledger, params: { id: bigintId }, query: EntryQuery },
  async ({ tenant, params, query }) => {
    // The account must be this tenant's before its entries are read.
    const account = await getAccount(tenant.id, params.id);
    if (!account) return jsonError(404, "not_found", `No account ${params.id} in tenant ${tenant.slug}`);
    return json(await listEntries(account.id, { limit: query.limit, beforeId: query.before }));
  },
);
