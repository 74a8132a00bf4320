// GET /api/v1/tenants/{tenant}/accounts: accounts with balances (signed minor units as strings).
import { listAccounts } from "@/lib/ledger/accounts";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { accessError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { AccountQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.ledger });
  if (!access.ok) return accessError(access);
  const q = parseInput(AccountQuery, queryOf(request));
  if (!q.ok) return q.response;
  return json(await listAccounts({ tenantId: access.tenant.id, kind: q.value.kind, code: q.value.code, limit: q.value.limit, afterId: q.value.after }));
});
