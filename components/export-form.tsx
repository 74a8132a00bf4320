// "Export CSV" for a period: a plain GET form to the export route, so the browser
// downloads the file with the session cookie and no script is involved. Both days
// are included (UTC); the default is the current month to date.
export function ExportForm({ tenant, kind, what }: { tenant: string; kind: string; what: string }) {
  const today = new Date().toISOString().slice(0, 10);
  const monthStart = `${today.slice(0, 8)}01`;
  return (
    <form
      method="get"
      action={`/api/v1/tenants/${tenant}/exports/${kind}`}
      className="filters"
      aria-label={`Export ${what} as CSV`}
    >
      <label>
        Export from
        <input type="date" name="from" defaultValue={monthStart} required />
      </label>
      <label>
        to
        <input type="date" name="to" defaultValue={today} required />
      </label>
      <button type="submit" className="secondary">
        Export {what} (CSV)
      </button>
    </form>
  );
}
