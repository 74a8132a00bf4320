// GET /api/v1/tenants/{tenant}/exports/audit?from=YYYY-MM-DD&to=YYYY-MM-DD: the period's audit as CSV (lib/views/exports.ts).
import { SECTION_ROLES } from "@/lib/auth/roles";
import { exportRoute } from "@/lib/views/exports";

export const dynamic = "force-dynamic";

export const GET = exportRoute("audit", SECTION_ROLES.audit);
