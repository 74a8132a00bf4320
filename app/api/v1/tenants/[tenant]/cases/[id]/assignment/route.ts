// POST /api/v1/tenants/{tenant}/cases/{id}/assignment {assigneeId: userId | null, reason}:
// gives the case to a member of the tenant who works cases (accountant or admin), or
// to nobody (null); audited with the reason. People only, accountants act.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { assignCase } from "@/lib/cases/assign";
import { json } from "@/lib/platform/http";
import { CASE_ACTION, personOf } from "../case-action";

export const dynamic = "force-dynamic";

const Assignment = z.object({
  assigneeId: z.uuid({ message: "must be a user id, or null to unassign" }).nullable(),
  reason: z.string().trim().min(3, "Say why, in a few words").max(2000),
});

export const POST = withTenant({ ...CASE_ACTION, body: Assignment }, async ({ tenant, principal, params, body }) => {
  const r = await assignCase(tenant.id, params.id, personOf(principal), body);
  return r.ok ? json(r.value) : r;
});
