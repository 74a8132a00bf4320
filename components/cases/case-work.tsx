"use client";
// Working a case: who has it (assign, take it, give it back), and snoozing it out
// of the open list until a date. Each change asks for a reason (the audit log keeps
// it) in a dialog that says what will happen, and the server has the last word.
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ReasonDialog } from "@/components/reason-dialog";

export type Person = { id: string; email: string; name: string | null };

export type CaseWorkProps = {
  tenant: string;
  caseId: string;
  status: string;
  me: string;
  canAct: boolean;
  assignee: Person | null;
  people: Person[];
  snoozedUntil: string | null;
  snoozeReason: string | null;
  snoozed: boolean;
  /** The first and last day a snooze may end on (YYYY-MM-DD), from the server's clock. */
  snoozeMin: string;
  snoozeMax: string;
};

const who = (p: Person) => p.name ?? p.email;

export function CaseWork(p: CaseWorkProps) {
  const router = useRouter();
  const [dialog, setDialog] = useState<"assign" | "unassign" | "snooze" | "unsnooze" | null>(null);
  const [target, setTarget] = useState(p.assignee?.id ?? p.me);
  const [until, setUntil] = useState(p.snoozeMin);
  const open = p.status !== "RESOLVED";
  const path = `/api/v1/tenants/${p.tenant}/cases/${p.caseId}`;
  const refresh = [["overview", p.tenant]];
  const done = () => router.refresh();
  const chosen = p.people.find((x) => x.id === target) ?? null;
  if (!open) return null;
  return (
    <section className="panel stack" aria-labelledby="case-work-h" data-testid="case-work">
      <h2 id="case-work-h">Who works it</h2>
      <p data-testid="assignee">
        {p.assignee ? (
          <>
            Assigned to <strong>{who(p.assignee)}</strong>
            {p.assignee.id === p.me ? " (you)" : ""}.
          </>
        ) : (
          "Nobody has this case yet."
        )}
      </p>
      {p.canAct ? (
        <div className="filters" role="group" aria-label="Assign the case">
          <label>
            Assign to
            <select value={target} onChange={(e) => setTarget(e.target.value)}>
              {p.people.map((x) => (
                <option key={x.id} value={x.id}>
                  {who(x)}
                  {x.id === p.me ? " (me)" : ""}
                </option>
              ))}
            </select>
          </label>
          <button type="button" disabled={!chosen || chosen.id === p.assignee?.id} onClick={() => setDialog("assign")}>
            Assign…
          </button>
          {p.assignee && (
            <button type="button" className="secondary" onClick={() => setDialog("unassign")}>
              Unassign…
            </button>
          )}
        </div>
      ) : (
        <p className="muted small">Only accountants assign cases.</p>
      )}

      <h2 id="case-snooze-h">Snooze</h2>
      {p.snoozed && p.snoozedUntil ? (
        <p data-testid="snoozed">
          Snoozed until <strong>{p.snoozedUntil.slice(0, 10)}</strong> ({p.snoozedUntil.slice(11, 16)} UTC): “
          {p.snoozeReason}”. It is out of the open list until then, and back by itself after.
        </p>
      ) : (
        <p className="small muted">
          Not snoozed. A snoozed case leaves the open list until its date (at most 90 days), then comes back by itself.
        </p>
      )}
      {p.canAct &&
        (p.snoozed ? (
          <div className="button-row">
            <button type="button" className="secondary" onClick={() => setDialog("unsnooze")}>
              Unsnooze…
            </button>
          </div>
        ) : p.status === "PROPOSED" ? (
          <p className="small muted">A case waiting for approval cannot be snoozed: its checker has to see it.</p>
        ) : (
          <div className="filters" role="group" aria-labelledby="case-snooze-h">
            <label>
              Until
              <input
                type="date"
                value={until}
                min={p.snoozeMin}
                max={p.snoozeMax}
                required
                onChange={(e) => setUntil(e.target.value)}
              />
            </label>
            <button type="button" disabled={!until} onClick={() => setDialog("snooze")}>
              Snooze…
            </button>
          </div>
        ))}

      {dialog === "assign" && chosen && (
        <ReasonDialog<unknown>
          id="assign"
          title={`Assign case #${p.caseId} to ${who(chosen)}?`}
          placeholder="e.g. Stripe cases are hers this month"
          submit="Assign"
          pending="Assigning…"
          request={(reason) => ({ path: `${path}/assignment`, body: { assigneeId: chosen.id, reason } })}
          refresh={refresh}
          onClose={() => setDialog(null)}
          onDone={done}
        >
          {p.assignee ? `${who(p.assignee)} no longer has it; ` : ""}
          {chosen.id === p.me ? "you" : who(chosen)} will.
        </ReasonDialog>
      )}
      {dialog === "unassign" && p.assignee && (
        <ReasonDialog<unknown>
          id="unassign"
          title={`Unassign case #${p.caseId}?`}
          placeholder="e.g. back to the pool while I am away"
          submit="Unassign"
          pending="Unassigning…"
          request={(reason) => ({ path: `${path}/assignment`, body: { assigneeId: null, reason } })}
          refresh={refresh}
          onClose={() => setDialog(null)}
          onDone={done}
        >
          {who(p.assignee)} no longer has it; it shows under unassigned.
        </ReasonDialog>
      )}
      {dialog === "snooze" && (
        <ReasonDialog<unknown>
          id="snooze"
          title={`Snooze case #${p.caseId} until ${until}?`}
          placeholder="e.g. Stripe support answers on Monday"
          submit="Snooze"
          pending="Snoozing…"
          request={(reason) => ({ path: `${path}/snooze`, body: { until, reason } })}
          refresh={refresh}
          onClose={() => setDialog(null)}
          onDone={done}
        >
          It leaves the open list until {until} (00:00 UTC), then comes back by itself.
        </ReasonDialog>
      )}
      {dialog === "unsnooze" && (
        <ReasonDialog<unknown>
          id="unsnooze"
          title={`Unsnooze case #${p.caseId}?`}
          placeholder="e.g. Stripe answered early"
          submit="Unsnooze"
          pending="Unsnoozing…"
          request={(reason) => ({ path: `${path}/snooze`, method: "DELETE", body: { reason } })}
          refresh={refresh}
          onClose={() => setDialog(null)}
          onDone={done}
        >
          It is back in the open list now.
        </ReasonDialog>
      )}
    </section>
  );
}
