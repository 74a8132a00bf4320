"use client";
// This tenant's retention of raw bodies: how many days the bytes of each delivery
// are kept (the worker removes older ones and keeps their SHA-256). Changing it
// asks why: a shorter retention destroys evidence, and the audit log says who chose it.
import { type FormEvent, useState } from "react";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";

export type RetentionData = { rawBodyRetentionDays: number; rawBodiesPurgedBefore: string | null };

export function RetentionAdmin({ tenant, initial }: { tenant: string; initial: RetentionData }) {
  const [days, setDays] = useState(initial.rawBodyRetentionDays);
  const change = useAdminMutation<{ rawBodyRetentionDays: number; reason: string }, { rawBodyRetentionDays: number }>(
    (body) => ({ path: `/api/v1/tenants/${tenant}`, method: "PATCH", body }),
    ["retention", tenant],
  );
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    change.mutate(
      { rawBodyRetentionDays: Number(f.get("days")), reason: String(f.get("reason")) },
      {
        onSuccess: (r) => {
          setDays(r.rawBodyRetentionDays);
          form.reset();
        },
      },
    );
  }
  return (
    <section aria-labelledby="retention-h">
      <h2 id="retention-h">Retention of raw bodies</h2>
      <p data-testid="retention-now">
        Raw bodies are kept <strong>{days} days</strong>, then removed by the worker; each one&apos;s SHA-256, its
        claims and postings are kept for ever. Bodies still to be worked, and those that are evidence of an unresolved
        conflict, are kept until they are not.
        {initial.rawBodiesPurgedBefore && (
          <> Bodies received before {initial.rawBodiesPurgedBefore.slice(0, 10)} have been removed.</>
        )}
      </p>
      <form onSubmit={submit} className="panel form-grid" aria-label="Change the retention of raw bodies">
        <label>
          Days (30 to 36500)
          <input name="days" type="number" required min={30} max={36500} step={1} defaultValue={days} key={days} />
        </label>
        <label>
          Why
          <input name="reason" required maxLength={500} />
        </label>
        <button type="submit" disabled={change.isPending}>
          Change retention
        </button>
        {change.error && (
          <p role="alert" className="error">
            {change.error.message}
          </p>
        )}
      </form>
    </section>
  );
}
