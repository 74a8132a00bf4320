// GET /api/v1/tenants/{tenant}/ledger?format=json|csv: the canonical ledger export.
import { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { accessError, handled, parseInput, queryOf } from "@/lib/platform/http";
import { exportLedger, ledgerCsv, ledgerJson } from "@/lib/ledger/export";

export const dynamic = "force-dynamic";

const Query = z.object({ format: z.enum(["json", "csv"]).default("json") });
type Params = { params: Promise<{ tenant: string }> };

export const GET = handled(async (request: Request, { params }: Params) => {
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: SECTION_ROLES.ledger });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  const e = await exportLedger(access.tenant.id, access.tenant.slug);
  return q.value.format === "csv"
    ? new Response(ledgerCsv(e), { headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="ledger-${access.tenant.slug}.csv"` } })
    : new Response(ledgerJson(e), { headers: { "content-type": "application/json" } });
});
