// GET /api/v1/tenants/{tenant}/cases?state=open|snoozed|closed|all&kind=&assignee=mine|unassigned|{userId}&age=0-1|2-7|8-30|31+&overdue=1:
// cases newest first, each with its discrepancy, assignee, age, due date, snooze and any proposal
// waiting for approval; and the selection's open cases per age bucket (counts).
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { agingCounts, listCases } from "@/lib/cases/list";
import { assigneeOf, CaseQuery } from "@/lib/cases/list-query";
import { json, jsonError } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  { roles: SECTION_ROLES.cases, query: CaseQuery },
  async ({ tenant, principal, query }) => {
    const assignee = assigneeOf(query.assignee, principal.kind === "user" ? principal.userId : null);
    if (assignee === null)
      return jsonError(400, "invalid_input", "assignee: mine needs a signed-in person; an API token is nobody's");
    const filter = {
      tenantId: tenant.id,
      state: query.state,
      kind: query.kind,
      assignee,
      age: query.age,
      overdue: query.overdue,
      now: new Date(),
    };
    const [page, counts] = await Promise.all([
      listCases({ ...filter, beforeId: query.before, limit: query.limit }),
      agingCounts(filter),
    ]);
    return json({ ...page, counts }, { headers: { "cache-control": "no-store" } });
  },
);
