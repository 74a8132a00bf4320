"use client";
// A page of events that keeps itself fresh: the server renders the first
// paint, react-query refetches the same query every few seconds.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { api } from "@/components/api-client";
import { EmptyState, NothingMatches } from "@/components/states";
import { StatusBadge } from "@/components/status-badge";
import { TableScroll } from "@/components/table-scroll";
import { TableHead } from "@/components/table-head";

export type EventRow = {
  id: string;
  provider: string;
  source: string;
  status: string;
  eventType: string | null;
  receivedAt: string;
  deliveryId: string | null;
  lastError: string | null;
  duplicateOfId: string | null;
  claims: { providerReference: string; status: string }[];
};
export type EventPage = { events: EventRow[]; nextBefore: string | null };

export function EventsTable({ tenant, query, initial }: { tenant: string; query: string; initial: EventPage }) {
  const { data, error, isFetching } = useQuery({
    queryKey: ["events", tenant, query],
    queryFn: () => api<EventPage>(`/api/v1/tenants/${tenant}/events${query ? `?${query}` : ""}`),
    initialData: initial,
    refetchInterval: 10_000,
  });
  const params = new URLSearchParams(query);
  params.delete("before");
  return (
    <>
      {error && (
        <p role="alert" className="error">
          Could not refresh: {error.message}. The list below may be stale; reload the page to retry.
        </p>
      )}
      {data.events.length === 0 && params.size > 0 ? (
        <NothingMatches what="events" clearHref={`/t/${tenant}/events`}>
          <p>
            Widen the dates, or check the reference: it matches once the worker has parsed the event; a delivery id
            (evt_…, msg_…) always matches.
          </p>
        </NothingMatches>
      ) : data.events.length === 0 ? (
        <EmptyState title="No events yet">
          <p>
            Events appear as providers deliver webhooks to <code>/api/webhooks/{tenant}/&lt;provider&gt;</code> (an
            admin sets up the signing secrets under Admin), and as reconciliation fetches what never arrived.
          </p>
        </EmptyState>
      ) : (
        <TableScroll label="Events">
          <table className="table" aria-busy={isFetching}>
            <caption className="visually-hidden">Events, newest first</caption>
            <TableHead columns={["#", "Received", "Provider", "Type", "Status", "Reference / delivery"]} />
            <tbody>
              {data.events.map((e) => (
                <tr key={e.id}>
                  <td>
                    <Link href={`/t/${tenant}/events/${e.id}`}>#{e.id}</Link>
                  </td>
                  <td>
                    <time dateTime={e.receivedAt}>{e.receivedAt.replace("T", " ").slice(0, 19)}</time>
                  </td>
                  <td>{e.provider}</td>
                  <td>{e.eventType ?? "—"}</td>
                  <td>
                    <StatusBadge status={e.status} />
                    {e.duplicateOfId && (
                      <>
                        {" "}
                        of <Link href={`/t/${tenant}/events/${e.duplicateOfId}`}>#{e.duplicateOfId}</Link>
                      </>
                    )}
                  </td>
                  <td className="mono">{e.claims.map((c) => c.providerReference).join(" ") || e.deliveryId || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <nav aria-label="Pages" className="pager">
        {params.toString() !== query && (
          <Link href={`/t/${tenant}/events${params.size ? `?${params}` : ""}`}>← Newest</Link>
        )}
        {data.nextBefore && (
          <Link
            href={`/t/${tenant}/events?${new URLSearchParams({ ...Object.fromEntries(params), before: data.nextBefore })}`}
          >
            Older →
          </Link>
        )}
      </nav>
    </>
  );
}
