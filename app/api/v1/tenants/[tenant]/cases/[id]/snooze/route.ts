// POST /api/v1/tenants/{tenant}/cases/{id}/snooze {until: YYYY-MM-DD | ISO instant, reason}:
// out of the open list until then (a day means its start, UTC), at most 90 days ahead.
// DELETE {reason}: back in the list now. Both audited; people only, accountants act.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { snoozeCase, unsnoozeCase } from "@/lib/cases/snooze";
import { json } from "@/lib/platform/http";
import { calendarDay } from "@/lib/platform/query-params";
import { CASE_ACTION, personOf } from "../case-action";

export const dynamic = "force-dynamic";

const reason = z.string().trim().min(3, "Say why, in a few words").max(2000);
const Snooze = z.object({
  until: z
    .union([calendarDay, z.iso.datetime({ offset: true })], {
      message: "must be a date (YYYY-MM-DD) or an ISO timestamp",
    })
    .transform((v) => new Date(v.length === 10 ? `${v}T00:00:00Z` : v)),
  reason,
});

export const POST = withTenant({ ...CASE_ACTION, body: Snooze }, async ({ tenant, principal, params, body }) => {
  const r = await snoozeCase(tenant.id, params.id, personOf(principal), body);
  return r.ok ? json(r.value) : r;
});

export const DELETE = withTenant(
  { ...CASE_ACTION, body: z.object({ reason }) },
  async ({ tenant, principal, params, body }) => {
    const r = await unsnoozeCase(tenant.id, params.id, personOf(principal), body);
    return r.ok ? json(r.value) : r;
  },
);
