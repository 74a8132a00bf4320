"use client";
// Stuck work for ops: claims held past the stale threshold, FAILED claims and
// unparseable events, oldest first, each with a Reprocess action that asks for
// a reason (audited) and sends the event back through the normal worker path.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { api } from "@/components/api-client";
import { duration, utc } from "@/components/format";
import { ReasonDialog } from "@/components/reason-dialog";
import { ListNotices } from "@/components/states";
import { ACTIONS, num, TableHead } from "@/components/table-head";

export type StuckItem = {
  kind: "stale_claim" | "waiting_claim" | "provider_wait" | "conflict" | "failed_claim" | "failed_event";
  claimId: string | null;
  rawEventId: string;
  provider: string;
  reference: string | null;
  attempts: number;
  lastError: string | null;
  receivedAt: string;
  claimedAt: string | null;
};
export type StuckData = { staleMs: number; items: StuckItem[] };

const KIND: Record<StuckItem["kind"], string> = {
  stale_claim: "held too long",
  waiting_claim: "refund waiting for its payment",
  provider_wait: "waiting for provider",
  conflict: "conflict: not posted, a case for accountants",
  failed_claim: "claim failed",
  failed_event: "could not be parsed",
};

function ReprocessDialog({
  tenant,
  item,
  onClose,
  onDone,
}: {
  tenant: string;
  item: StuckItem;
  onClose: () => void;
  onDone: (message: string) => void;
}) {
  return (
    <ReasonDialog<{ action: string; claims: number }>
      id="reprocess"
      title={`Reprocess event #${item.rawEventId}`}
      placeholder="e.g. the payment is now posted; refund can be applied"
      submit="Reprocess"
      pending="Reprocessing…"
      request={(reason) => ({
        path: `/api/v1/tenants/${tenant}/events/${item.rawEventId}/reprocess`,
        body: { reason },
      })}
      refresh={[
        ["stuck", tenant],
        ["overview", tenant],
      ]}
      onClose={onClose}
      onDone={(r) =>
        onDone(
          r.action === "reparse"
            ? `Event #${item.rawEventId} queued to be parsed again.`
            : `Event #${item.rawEventId}: ${r.claims} claim(s) released; a worker will complete ${r.claims === 1 ? "it" : "them"} once.`,
        )
      }
    >
      {item.reference ? (
        <>
          The claim on <code>{item.reference}</code> is released (new fencing token) and the normal worker path
          completes it, once.
        </>
      ) : (
        <>The event is parsed again by the worker.</>
      )}
    </ReasonDialog>
  );
}

export function StuckClaims({
  tenant,
  initial,
  canReprocess,
}: {
  tenant: string;
  initial: StuckData;
  canReprocess: boolean;
}) {
  const { data, error } = useQuery({
    queryKey: ["stuck", tenant],
    queryFn: () => api<StuckData>(`/api/v1/tenants/${tenant}/claims`),
    initialData: initial,
    refetchInterval: 10_000,
  });
  const [open, setOpen] = useState<StuckItem | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const now = Date.now();
  return (
    <>
      <ListNotices done={done} error={error} />
      {data.items.length === 0 ? (
        <div className="empty">
          <h2>Nothing is stuck</h2>
          <p>
            No claim has been held longer than {duration(data.staleMs)} (the stale-claim threshold), no refund has
            waited that long for its payment, none has failed, and every event parsed. The sweep releases stale claims
            on its own; this list is for what it could not fix.
          </p>
        </div>
      ) : (
        <table className="table cards-narrow">
          <caption className="visually-hidden">Stuck claims and failed events, oldest first</caption>
          <TableHead columns={["Event", "What", "Reference", "Age", num("Attempts"), "Last error", ACTIONS]} />
          <tbody>
            {data.items.map((i) => (
              <tr key={`${i.rawEventId}-${i.claimId ?? "e"}`}>
                <td data-label="Event">
                  <Link href={`/t/${tenant}/events/${i.rawEventId}`}>#{i.rawEventId}</Link>{" "}
                  <span className="muted">{i.provider}</span>
                </td>
                <td data-label="What">
                  <span
                    className={
                      i.kind === "stale_claim" || i.kind === "waiting_claim" || i.kind === "provider_wait"
                        ? "tone-warn"
                        : "tone-bad"
                    }
                  >
                    {KIND[i.kind]}
                  </span>
                  {i.claimedAt && (
                    <div className="small muted">
                      {i.kind === "provider_wait" ? "for" : i.kind === "conflict" ? "found" : "held"}{" "}
                      {duration(now - Date.parse(i.claimedAt))}
                      {i.kind === "conflict" ? " ago" : ""}
                    </div>
                  )}
                </td>
                <td data-label="Reference" className="mono">
                  {i.reference ?? "—"}
                </td>
                <td data-label="Age" title={`received ${utc(i.receivedAt)} UTC`}>
                  {duration(now - Date.parse(i.receivedAt))}
                </td>
                <td data-label="Attempts" className="num">
                  {i.attempts}
                </td>
                <td data-label="Last error" className="small wrap">
                  {i.lastError ?? "—"}
                </td>
                <td className="row-actions">
                  {canReprocess ? (
                    <button
                      type="button"
                      onClick={() => {
                        setDone(null);
                        setOpen(i);
                      }}
                      aria-label={`Reprocess event ${i.rawEventId}`}
                    >
                      Reprocess
                    </button>
                  ) : (
                    <span className="small muted">ops may reprocess</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && <ReprocessDialog tenant={tenant} item={open} onClose={() => setOpen(null)} onDone={setDone} />}
    </>
  );
}
