"use client";
// Users and roles: create (generated password shown once), change role and
// tenant memberships, disable or enable, sign out of every session.
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api } from "@/components/api-client";
import { ShownOnce } from "@/components/admin/shown-once";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";
import { TableScroll } from "@/components/table-scroll";
import { ACTIONS, TableHead } from "@/components/table-head";

type User = {
  id: string;
  email: string;
  name: string | null;
  role: string;
  disabledAt: string | null;
  tenants: string[];
  activeSessions: number;
};
export type UsersData = { users: User[] };
const ROLES = ["ops", "accountant", "admin"];
const KEY = ["users"];

function selected(form: HTMLFormElement, name: string): string[] {
  return new FormData(form).getAll(name).map(String);
}

function UserRow({ user, tenants }: { user: User; tenants: string[] }) {
  const [editing, setEditing] = useState(false);
  const change = useAdminMutation<Record<string, unknown>, unknown>(
    (body) => ({ path: `/api/v1/users/${user.id}`, method: "PATCH", body }),
    KEY,
  );
  const signOut = useAdminMutation<{ reason?: string }, { revoked: number }>(
    (body) => ({ path: `/api/v1/users/${user.id}/sessions`, method: "DELETE", body }),
    KEY,
  );
  return (
    <tr>
      <td>
        {user.email}
        {user.name ? <div className="muted small">{user.name}</div> : null}
      </td>
      <td>
        {editing ? (
          <form
            aria-label={`Change ${user.email}`}
            onSubmit={(e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget);
              change.mutate(
                {
                  role: f.get("role"),
                  tenants: selected(e.currentTarget, "tenants"),
                  reason: f.get("reason") || undefined,
                },
                { onSuccess: () => setEditing(false) },
              );
            }}
            className="stack small"
          >
            <label>
              Role
              <select name="role" defaultValue={user.role}>
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </label>
            <fieldset>
              <legend>Tenants</legend>
              {tenants.map((t) => (
                <label key={t} className="inline">
                  <input type="checkbox" name="tenants" value={t} defaultChecked={user.tenants.includes(t)} /> {t}
                </label>
              ))}
            </fieldset>
            <label>
              Reason
              <input name="reason" maxLength={500} />
            </label>
            <span>
              <button type="submit">Save</button>{" "}
              <button type="button" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </span>
          </form>
        ) : (
          <>
            {user.role}{" "}
            <span className="muted">
              · {user.role === "admin" ? "all tenants" : user.tenants.join(", ") || "no tenant"}
            </span>
          </>
        )}
        {change.error && (
          <p role="alert" className="error">
            {change.error.message}
          </p>
        )}
      </td>
      <td>
        {user.disabledAt ? "disabled" : `${user.activeSessions} active session${user.activeSessions === 1 ? "" : "s"}`}
      </td>
      <td className="actions">
        {!editing && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        <button
          type="button"
          onClick={() => {
            const reason = window.prompt(`${user.disabledAt ? "Enable" : "Disable"} ${user.email}? Reason:`);
            if (reason !== null) change.mutate({ disabled: !user.disabledAt, reason: reason || undefined });
          }}
        >
          {user.disabledAt ? "Enable" : "Disable"}
        </button>
        <button
          type="button"
          disabled={user.activeSessions === 0}
          onClick={() => {
            const reason = window.prompt(`Sign ${user.email} out everywhere? Reason:`);
            if (reason !== null) signOut.mutate({ reason: reason || undefined });
          }}
        >
          Revoke sessions
        </button>
        {signOut.error && (
          <p role="alert" className="error">
            {signOut.error.message}
          </p>
        )}
      </td>
    </tr>
  );
}

export function UsersAdmin({ initial, tenants }: { initial: UsersData; tenants: string[] }) {
  const { data } = useQuery({ queryKey: KEY, queryFn: () => api<UsersData>("/api/v1/users"), initialData: initial });
  const [created, setCreated] = useState<{ email: string; password: string } | null>(null);
  const create = useAdminMutation<Record<string, unknown>, { user: { email: string }; password: string }>(
    (body) => ({ path: "/api/v1/users", method: "POST", body }),
    KEY,
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    create.mutate(
      {
        email: f.get("email"),
        name: f.get("name") || undefined,
        role: f.get("role"),
        tenants: selected(form, "tenants"),
      },
      {
        onSuccess: (r) => {
          setCreated({ email: r.user.email, password: r.password });
          form.reset();
        },
      },
    );
  }

  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">Users and roles</h2>
      {created && (
        <ShownOnce label={`Password for ${created.email}`} value={created.password} onDone={() => setCreated(null)} />
      )}
      <TableScroll label="Users">
        <table className="table">
          <TableHead columns={["User", "Role and tenants", "State", ACTIONS]} />
          <tbody>
            {data.users.map((u) => (
              <UserRow key={u.id} user={u} tenants={tenants} />
            ))}
          </tbody>
        </table>
      </TableScroll>
      <form onSubmit={submit} className="panel form-grid" aria-label="Create a user">
        <h3>Create a user</h3>
        <label>
          Email
          <input name="email" type="email" required />
        </label>
        <label>
          Name
          <input name="name" />
        </label>
        <label>
          Role
          <select name="role" defaultValue="ops">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Tenants (not needed for admins)</legend>
          {tenants.map((t) => (
            <label key={t} className="inline">
              <input type="checkbox" name="tenants" value={t} /> {t}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={create.isPending}>
          Create user
        </button>
        {create.error && (
          <p role="alert" className="error">
            {create.error.message}
          </p>
        )}
      </form>
    </section>
  );
}
