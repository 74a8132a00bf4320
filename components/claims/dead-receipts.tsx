"use client";
// Dead receipts for ops: the list under the page's filter, refreshed every few
// seconds, with checkboxes. "Redeliver selected" names ids; "Redeliver all N
// matching" sends the filter with the N the person saw, and the server refuses
// (409) if the filter matches another number by then. Both ask for a reason
// (audited) in a dialog that says how many receipts will go out again.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/components/api-client";
import type { DeadReceipt } from "@/lib/pipeline/dead-letters";
import { plural, utc } from "@/components/format";
import { formatMoney } from "@/components/money";
import { EmptyState, ListNotices, NothingMatches } from "@/components/states";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { ReasonDialog } from "@/components/reason-dialog";

/** A dead receipt as JSON carries it: ids as strings, dates as ISO strings. */
export type DeadItem = {
  [K in keyof DeadReceipt]: DeadReceipt[K] extends bigint | Date ? string : DeadReceipt[K];
};
export type DeadPage = { items: DeadItem[]; total: number };

type Target = { ids: string[] } | { filter: Record<string, string>; expected: number };

function RedeliverDialog({
  tenant,
  target,
  onClose,
  onDone,
}: {
  tenant: string;
  target: Target;
  onClose: () => void;
  onDone: (message: string) => void;
}) {
  const count = "ids" in target ? target.ids.length : target.expected;
  return (
    <ReasonDialog<{ redelivered: number }>
      id="redeliver"
      title={`Redeliver ${plural(count, "dead receipt")}?`}
      placeholder="e.g. the receiver's endpoint is fixed"
      submit={`Redeliver ${plural(count, "receipt")}`}
      pending="Redelivering…"
      request={(reason) => ({ path: `/api/v1/tenants/${tenant}/receipts/dead/redeliver`, body: { ...target, reason } })}
      refresh={[["dead-receipts", tenant]]}
      onClose={onClose}
      onDone={(r) =>
        onDone(`${plural(r.redelivered, "receipt")} queued again; the dispatcher sends them within seconds.`)
      }
    >
      {"ids" in target
        ? "The receipts you selected"
        : `Every dead receipt matching the filter (${count} when you looked; if that number has changed, nothing is sent and you are asked to look again)`}{" "}
      go out again from the first step of the retry schedule, each under its own idempotency key.
    </ReasonDialog>
  );
}

export function DeadReceipts({
  tenant,
  filter,
  initial,
  canRedeliver,
}: {
  tenant: string;
  filter: Record<string, string>;
  initial: DeadPage;
  canRedeliver: boolean;
}) {
  const query = new URLSearchParams(filter).toString();
  const { data, error } = useQuery({
    queryKey: ["dead-receipts", tenant, query],
    queryFn: () => api<DeadPage>(`/api/v1/tenants/${tenant}/receipts/dead${query ? `?${query}` : ""}`),
    initialData: initial,
    refetchInterval: 10_000,
  });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [target, setTarget] = useState<Target | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const visible = new Set(data.items.map((i) => i.id));
  const chosen = [...selected].filter((id) => visible.has(id));
  const toggle = (id: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const open = (t: Target) => {
    setDone(null);
    setTarget(t);
  };
  return (
    <>
      <ListNotices done={done} error={error} />
      {data.total === 0 && query ? (
        <NothingMatches what="dead receipts" clearHref={`/t/${tenant}/claims/dead-receipts`} />
      ) : data.total === 0 ? (
        <EmptyState title="No dead receipts">
          <p>
            Every receipt was delivered or is still within its retry schedule. A receipt lands here only when the
            receiving system refused it on every retry.
          </p>
        </EmptyState>
      ) : (
        <>
          <p>
            {plural(data.total, "dead receipt")}
            {query ? " match these filters" : ""}
            {data.items.length < data.total ? `; the newest ${data.items.length} are listed` : ""}.
          </p>
          {canRedeliver ? (
            <div className="button-row">
              <button type="button" disabled={chosen.length === 0} onClick={() => open({ ids: chosen })}>
                Redeliver selected ({chosen.length})
              </button>
              <button type="button" className="secondary" onClick={() => open({ filter, expected: data.total })}>
                Redeliver all {data.total} {query ? "matching" : ""}
              </button>
            </div>
          ) : (
            <p className="small muted">ops may redeliver receipts</p>
          )}
          <TableScroll label="Dead receipts">
            <table className="table">
              <caption className="visually-hidden">Dead receipts, newest first</caption>
              <TableHead
                columns={[
                  ...(canRedeliver
                    ? [
                        <span key="s" className="visually-hidden">
                          Select
                        </span>,
                      ]
                    : []),
                  "Receipt",
                  "Reference",
                  num("Amount"),
                  "Died",
                  num("Attempts"),
                  "Last error",
                ]}
              />
              <tbody>
                {data.items.map((i) => (
                  <tr key={i.id}>
                    {canRedeliver && (
                      <td>
                        <input
                          type="checkbox"
                          checked={selected.has(i.id)}
                          onChange={() => toggle(i.id)}
                          aria-label={`Select receipt ${i.id}`}
                        />
                      </td>
                    )}
                    <td>
                      #{i.id} <span className="muted">{i.provider ?? i.kind}</span>
                    </td>
                    <td className="mono">{i.reference ?? "—"}</td>
                    <td className="num mono">
                      {i.amount === null || i.currency === null ? "—" : formatMoney(i.amount, i.currency)}
                    </td>
                    <td>{utc(i.deadAt)}</td>
                    <td className="num">{i.attempts}</td>
                    <td className="small wrap">{i.lastError ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </>
      )}
      {target && <RedeliverDialog tenant={tenant} target={target} onClose={() => setTarget(null)} onDone={setDone} />}
    </>
  );
}
