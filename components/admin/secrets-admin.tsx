"use client";
// A tenant's provider endpoints and signing secrets: add (generated or pasted),
// rotate with an overlap, revoke. Existing secrets show only label, dates and fingerprint.
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api } from "@/components/api-client";
import { ShownOnce } from "@/components/admin/shown-once";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";
import { TableScroll } from "@/components/table-scroll";
import { ACTIONS, TableHead } from "@/components/table-head";

type Secret = {
  id: string;
  label: string | null;
  fingerprint: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  state: string;
};
type Endpoint = { id: string; provider: string; enabled: boolean; secrets: Secret[] };
export type EndpointsData = { endpoints: Endpoint[]; providers: string[] };
type Added = { secret: string; fingerprint: string; expiring: number; webhookUrl: string };

const day = (s: string | null) => (s ? s.slice(0, 16).replace("T", " ") : "—");

export function SecretsAdmin({ tenant, initial }: { tenant: string; initial: EndpointsData }) {
  const key = ["endpoints", tenant];
  const { data } = useQuery({
    queryKey: key,
    queryFn: () => api<EndpointsData>(`/api/v1/tenants/${tenant}/endpoints`),
    initialData: initial,
  });
  const [shown, setShown] = useState<Added | null>(null);
  const add = useAdminMutation<{ provider: string; label?: string; secret?: string; overlapHours?: number }, Added>(
    ({ provider, ...body }) => ({
      path: `/api/v1/tenants/${tenant}/endpoints/${provider}/secrets`,
      method: "POST",
      body,
    }),
    key,
  );
  const revoke = useAdminMutation<{ id: string; reason: string }, unknown>(
    ({ id, reason }) => ({ path: `/api/v1/tenants/${tenant}/secrets/${id}`, method: "DELETE", body: { reason } }),
    key,
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const rotate = f.get("mode") === "rotate";
    const pasted = String(f.get("secret") ?? "").trim();
    add.mutate(
      {
        provider: String(f.get("provider")),
        label: String(f.get("label") ?? "") || undefined,
        secret: pasted || undefined,
        overlapHours: rotate ? Number(f.get("overlapHours")) : undefined,
      },
      {
        onSuccess: (r) => {
          setShown(r);
          e.currentTarget?.reset();
        },
      },
    );
  }

  return (
    <section aria-labelledby="secrets-h">
      <h2 id="secrets-h">Provider endpoints and secrets</h2>
      {shown && (
        <ShownOnce
          label={`New secret (fingerprint ${shown.fingerprint}) for ${shown.webhookUrl}${shown.expiring ? `; ${shown.expiring} older secret(s) now expire after the overlap` : ""}`}
          value={shown.secret}
          onDone={() => setShown(null)}
        />
      )}
      {data.endpoints.length === 0 && (
        <p className="muted">
          No provider endpoint yet: add a secret below and point the provider’s webhooks at{" "}
          <code>/api/webhooks/{tenant}/&lt;provider&gt;</code>.
        </p>
      )}
      {data.endpoints.map((ep) => (
        <div key={ep.id} className="panel">
          <h3>
            {ep.provider}{" "}
            <span className="muted">
              /api/webhooks/{tenant}/{ep.provider}
              {ep.enabled ? "" : " (disabled)"}
            </span>
          </h3>
          <TableScroll label="Signing secrets">
            <table className="table">
              <TableHead columns={["Label", "Fingerprint", "Created", "Expires", "State", ACTIONS]} />
              <tbody>
                {ep.secrets.map((s) => (
                  <tr key={s.id}>
                    <td>{s.label ?? "—"}</td>
                    <td className="mono">{s.fingerprint}</td>
                    <td>{day(s.createdAt)}</td>
                    <td>{s.revokedAt ? `revoked ${day(s.revokedAt)}` : day(s.expiresAt)}</td>
                    <td>{s.state}</td>
                    <td>
                      {(s.state === "active" || s.state === "expiring") && (
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            const reason = window.prompt(
                              `Revoke secret ${s.fingerprint} now? Deliveries signed with it will be refused. Reason:`,
                            );
                            if (reason) revoke.mutate({ id: s.id, reason });
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </div>
      ))}
      {revoke.error && (
        <p role="alert" className="error">
          {revoke.error.message}
        </p>
      )}

      <form onSubmit={submit} className="panel form-grid" aria-label="Add or rotate a secret">
        <h3>Add or rotate a secret</h3>
        <label>
          Provider
          <select name="provider" defaultValue={data.providers[0]}>
            {data.providers.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Label
          <input name="label" maxLength={100} placeholder="e.g. 2026-12 rotation" />
        </label>
        <fieldset>
          <legend>Existing secrets</legend>
          <label className="inline">
            <input type="radio" name="mode" value="add" defaultChecked /> keep them valid (add)
          </label>
          <label className="inline">
            <input type="radio" name="mode" value="rotate" /> rotate: let them expire after
          </label>
          <label className="inline">
            Overlap hours
            <input name="overlapHours" type="number" min={0} max={720} defaultValue={24} />
          </label>
        </fieldset>
        <label>
          Secret from the provider (optional; leave empty to generate one)
          <input name="secret" autoComplete="off" spellCheck={false} />
        </label>
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? "Saving…" : "Save secret"}
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
