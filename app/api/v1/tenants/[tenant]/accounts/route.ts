// GET /api/v1/tenants/{tenant}/accounts: accounts with balances (signed minor units as strings).
import { withTenant } from "@/lib/auth/with-access";
import { listAccounts } from "@/lib/ledger/accounts";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { json } from "@/lib/platform/http";
import { AccountQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export const GET = withTenant({ roles: SECTION_ROLES.ledger, query: AccountQuery }, async ({ tenant, query }) =>
  json(
    await listAccounts({
      tenantId: tenant.id,
      kind: query.kind,
      code: query.code,
      limit: query.limit,
      afterId: query.after,
    }),
  ),
);
