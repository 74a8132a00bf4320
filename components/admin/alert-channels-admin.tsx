"use client";
// A tenant's alert channels: where notifications go when an alert opens or clears.
// Add (email addresses, a JSON webhook or a Slack incoming webhook), send a test,
// turn off or on, remove. URLs are shown as their origin only: they are secrets.
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api } from "@/components/api-client";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";
import { TableScroll } from "@/components/table-scroll";
import { ACTIONS, TableHead } from "@/components/table-head";

type Channel = { id: string; kind: "EMAIL" | "WEBHOOK" | "SLACK"; name: string; target: string; enabled: boolean };
export type ChannelsData = { channels: Channel[] };

const KIND_LABEL: Record<Channel["kind"], string> = { EMAIL: "Email", WEBHOOK: "Webhook (JSON)", SLACK: "Slack" };

export function AlertChannelsAdmin({ tenant, initial }: { tenant: string; initial: ChannelsData }) {
  const key = ["alert-channels", tenant];
  const path = `/api/v1/tenants/${tenant}/alerts/channels`;
  const { data } = useQuery({ queryKey: key, queryFn: () => api<ChannelsData>(path), initialData: initial });
  const [tested, setTested] = useState<string | null>(null);
  const add = useAdminMutation<{ kind: string; name: string; target: string }, Channel>(
    (body) => ({ path, method: "POST", body }),
    key,
  );
  const toggle = useAdminMutation<{ id: string; enabled: boolean; reason: string }, unknown>(
    ({ id, ...body }) => ({ path: `${path}/${id}`, method: "PATCH", body }),
    key,
  );
  const remove = useAdminMutation<{ id: string; reason: string }, unknown>(
    ({ id, reason }) => ({ path: `${path}/${id}`, method: "DELETE", body: { reason } }),
    key,
  );
  const test = useAdminMutation<{ id: string }, { channel: string }>(
    ({ id }) => ({ path: `${path}/${id}/test`, method: "POST" }),
    key,
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    add.mutate(
      { kind: String(f.get("kind")), name: String(f.get("name") ?? ""), target: String(f.get("target") ?? "") },
      { onSuccess: () => form.reset() },
    );
  }

  const failure = toggle.error ?? remove.error ?? test.error;
  return (
    <section aria-labelledby="alert-channels-h">
      <h2 id="alert-channels-h">Alert channels</h2>
      <p className="muted">
        When an alert opens (webhooks gone silent, stuck or failed claims, conflicts, dead receipts, a rising
        discrepancy trend, a reconciliation that failed or did not run) each enabled channel gets one notification, and
        one more when it clears.
      </p>
      <TableScroll label="Alert channels">
        <table className="table">
          <TableHead columns={["Name", "Kind", "Sends to", "State", ACTIONS]} />
          <tbody>
            {data.channels.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No channel yet: alerts show on the overview only.
                </td>
              </tr>
            )}
            {data.channels.map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                <td>{KIND_LABEL[c.kind]}</td>
                <td className="mono">{c.target}</td>
                <td>{c.enabled ? "enabled" : "disabled"}</td>
                <td>
                  <button
                    type="button"
                    disabled={test.isPending}
                    onClick={() => {
                      setTested(null);
                      test.mutate({ id: c.id }, { onSuccess: (r) => setTested(r.channel) });
                    }}
                  >
                    Send a test
                  </button>{" "}
                  <button
                    type="button"
                    onClick={() => {
                      const reason = window.prompt(`${c.enabled ? "Disable" : "Enable"} channel "${c.name}"? Reason:`);
                      if (reason) toggle.mutate({ id: c.id, enabled: !c.enabled, reason });
                    }}
                  >
                    {c.enabled ? "Disable" : "Enable"}
                  </button>{" "}
                  <button
                    type="button"
                    className="danger"
                    onClick={() => {
                      const reason = window.prompt(
                        `Remove channel "${c.name}" and anything still queued for it? Reason:`,
                      );
                      if (reason) remove.mutate({ id: c.id, reason });
                    }}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {tested && <p role="status">Test notification delivered to “{tested}”.</p>}
      {failure && (
        <p role="alert" className="error">
          {failure.message}
        </p>
      )}

      <form onSubmit={submit} className="panel form-grid" aria-label="Add an alert channel">
        <h3>Add a channel</h3>
        <label>
          Kind
          <select name="kind" defaultValue="EMAIL">
            {Object.entries(KIND_LABEL).map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name
          <input name="name" required maxLength={100} placeholder="e.g. ops on call" />
        </label>
        <label>
          Email address(es), comma-separated, or the webhook URL
          <input name="target" required autoComplete="off" spellCheck={false} />
        </label>
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? "Saving…" : "Add channel"}
        </button>
        {add.error && (
          <p role="alert" className="error">
            {add.error.message}
          </p>
        )}
      </form>
    </section>
  );
}
