// GET /api/v1/tenants/{tenant}/ledger?format=json|csv: the canonical ledger export.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { exportLedger, ledgerCsv, ledgerJson } from "@/lib/ledger/export";

export const dynamic = "force-dynamic";

const Query = z.object({ format: z.enum(["json", "csv"]).default("json") });

export const GET = withTenant({ roles: SECTION_ROLES.ledger, query: Query }, async ({ tenant, query }) => {
  const e = await exportLedger(tenant.id, tenant.slug);
  return query.format === "csv"
    ? new Response(ledgerCsv(e), {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="ledger-${tenant.slug}.csv"`,
        },
      })
    : new Response(ledgerJson(e), { headers: { "content-type": "application/json" } });
});
