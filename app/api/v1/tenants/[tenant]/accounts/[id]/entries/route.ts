// GET /api/v1/tenants/{tenant}/accounts/{id}/entries: the account's ledger entries with their postings.
import { getAccount, listEntries } from "@/lib/ledger/accounts";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { accessError, handled, json, jsonError, parseInput, queryOf } from "@/lib/platform/http";
import { bigintId, EntryQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; id: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: SECTION_ROLES.ledger });
  if (!access.ok) return accessError(access);
  const accountId = parseInput(bigintId, id);
  if (!accountId.ok) return accountId.response;
  const q = parseInput(EntryQuery, queryOf(request));
  if (!q.ok) return q.response;
  // The account must be this tenant's before its entries are read.
  const account = await getAccount(access.tenant.id, accountId.value);
  if (!account) return jsonError(404, "not_found", `No account ${id} in tenant ${tenant}`);
  return json(await listEntries(account.id, { limit: q.value.limit, beforeId: q.value.before }));
});
