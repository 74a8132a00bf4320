"use client";
// Tenants: list and create. A new tenant then needs a provider secret and members.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { FormEvent } from "react";
import { api } from "@/components/api-client";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";
import { TableScroll } from "@/components/table-scroll";
import { TableHead } from "@/components/table-head";

type Tenant = { id: string; slug: string; name: string; createdAt: string; endpoints: number; members: number };
export type TenantsData = { tenants: Tenant[] };
const KEY = ["tenants"];

export function TenantsAdmin({ initial }: { initial: TenantsData }) {
  const { data } = useQuery({
    queryKey: KEY,
    queryFn: () => api<TenantsData>("/api/v1/tenants"),
    initialData: initial,
  });
  const create = useAdminMutation<{ slug: string; name: string }, unknown>(
    (body) => ({ path: "/api/v1/tenants", method: "POST", body }),
    KEY,
  );
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    create.mutate({ slug: String(f.get("slug")), name: String(f.get("name")) }, { onSuccess: () => form.reset() });
  }
  return (
    <section aria-labelledby="tenants-h">
      <h2 id="tenants-h">Tenants</h2>
      <TableScroll label="Tenants">
        <table className="table">
          <TableHead columns={["Slug", "Name", "Endpoints", "Members", "Created"]} />
          <tbody>
            {data.tenants.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link href={`/t/${t.slug}/admin`}>{t.slug}</Link>
                </td>
                <td>{t.name}</td>
                <td>{t.endpoints}</td>
                <td>{t.members}</td>
                <td>{t.createdAt.slice(0, 10)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <form onSubmit={submit} className="panel form-grid" aria-label="Create a tenant">
        <h3>Create a tenant</h3>
        <label>
          Slug (in webhook URLs)
          <input name="slug" required pattern="[a-z0-9][a-z0-9-]*" maxLength={64} />
        </label>
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <button type="submit" disabled={create.isPending}>
          Create tenant
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
