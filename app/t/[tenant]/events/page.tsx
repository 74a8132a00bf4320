// Events: search a tenant's raw events by reference, status, provider and dates; ops
// send back every failed or ignored event the filter matches at once (bulk reprocessing).
import Link from "next/link";
import { BulkReprocess } from "@/components/events/bulk-reprocess";
import { EventsTable, type EventPage } from "@/components/events-table";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { RAW_EVENT_STATUSES, searchEvents } from "@/lib/views/events";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import { DayRange, formValues, ProviderSelect, type Search } from "@/components/filter-fields";
import { plain } from "@/lib/platform/http";
import { EventQuery } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export default async function EventsPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Search>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "events");
  if (!allowed) return <NoAccess role={principal.role} section="Events" />;
  const raw = await formValues(searchParams);
  const q = EventQuery.safeParse(raw);
  const query = new URLSearchParams(Object.entries(raw).filter(([, v]) => v !== "")).toString();
  return (
    <>
      <h1>Events</h1>
      <p>
        <Link href={`/t/${slug}/events/refused`}>Refused deliveries</Link>: what the acknowledgement refused, and why.
      </p>
      <form method="get" className="filters" role="search" aria-label="Filter events">
        <label>
          Reference or delivery id
          <input name="reference" defaultValue={raw.reference ?? ""} placeholder="pi_…, evt_…" />
        </label>
        <label>
          Status
          <select name="status" defaultValue={raw.status ?? ""}>
            <option value="">Any</option>
            {RAW_EVENT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <ProviderSelect value={raw.provider} />
        <DayRange values={raw} />
        <button type="submit">Search</button>
      </form>
      {mayDo(principal.role, "reprocess") && q.success && <BulkReprocess tenant={slug} filter={raw} />}
      {q.success ? (
        <EventsTable
          tenant={slug}
          query={query}
          initial={
            plain(
              await searchEvents({
                tenantId: tenant.id,
                ...q.data,
                status: q.data.status as RawEventStatus | undefined,
                beforeId: q.data.before,
              }),
            ) as EventPage
          }
        />
      ) : (
        <p role="alert" className="error">
          Fix the filter: {q.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}
        </p>
      )}
    </>
  );
}
