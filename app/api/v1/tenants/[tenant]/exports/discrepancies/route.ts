// GET /api/v1/tenants/{tenant}/exports/discrepancies?from=YYYY-MM-DD&to=YYYY-MM-DD: the period's discrepancies as CSV (lib/views/exports.ts).
import { SECTION_ROLES } from "@/lib/auth/roles";
import { exportRoute } from "@/lib/views/exports";

export const dynamic = "force-dynamic";

export const GET = exportRoute("discrepancies", SECTION_ROLES.reconciliation);
