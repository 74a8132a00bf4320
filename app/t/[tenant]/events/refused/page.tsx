// Refused deliveries: what providers (or anyone with the URL) sent that the acknowledgement
// refused, with the reason and its likely cause, newest first. Ops read it when the overview
// shows refusals or a reconciliation says "signature refused".
import Link from "next/link";
import { DayRange, formValues, ProviderSelect, type Search } from "@/components/filter-fields";
import { utc } from "@/components/format";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { config } from "@/lib/platform/config";
import { RefusedQuery } from "@/lib/platform/query-params";
import { listRefused } from "@/lib/views/refused";

export const dynamic = "force-dynamic";

/** What a hint means for the person reading it (lib/providers/types.ts VerifyHint). */
const HINTS: Record<string, string> = {
  body_reserialized: "the body was re-serialised or trimmed after signing (a proxy or framework in front)",
  secret_whitespace: "the configured secret has surrounding whitespace",
  wrong_secret: "no secret we hold made this signature: another account, endpoint or mode, or a forged body",
  payload_altered: "the secret is right but this part was altered",
  clock_skew: "the signed timestamp is outside the endpoint's tolerance",
  wrong_endpoint: "another provider's signature: sent to the wrong Tally URL",
};

export default async function RefusedPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Search>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "events");
  if (!allowed) return <NoAccess role={principal.role} section="Events" />;
  const raw = await formValues(searchParams);
  const q = RefusedQuery.safeParse(raw);
  const c = config();
  const page = q.success
    ? await listRefused({ tenantId: tenant.id, ...q.data, beforeId: q.data.before })
    : { items: [], nextBefore: null };
  const next = new URLSearchParams({
    ...Object.fromEntries(Object.entries(raw).filter(([k, v]) => v !== "" && k !== "before")),
    ...(page.nextBefore !== null && { before: String(page.nextBefore) }),
  }).toString();
  return (
    <>
      <h1>Refused deliveries</h1>
      <p>
        Deliveries to this tenant's endpoints whose signature did not verify, kept {c.TALLY_REFUSED_RETENTION_DAYS} days
        (at most {c.TALLY_REFUSED_KEEP_PER_MINUTE} a minute per endpoint; the first{" "}
        {Math.round(c.TALLY_REFUSED_BODY_KEEP_BYTES / 1024)} KiB of each body). Nothing here was stored as an event or
        moved money; the bodies are unverified. <Link href={`/t/${slug}/events`}>Back to events</Link>
      </p>
      <form method="get" className="filters" role="search" aria-label="Filter refused deliveries">
        <label>
          Reference or text in the body
          <input name="reference" defaultValue={raw.reference ?? ""} placeholder="pi_…, evt_…" />
        </label>
        <ProviderSelect value={raw.provider} />
        <DayRange values={raw} />
        <button type="submit">Search</button>
      </form>
      {!q.success ? (
        <p role="alert" className="error">
          Fix the filter: {q.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}
        </p>
      ) : page.items.length === 0 ? (
        <p>No refused deliveries match.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Refused deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Received (UTC)</th>
              <th scope="col">Provider</th>
              <th scope="col">Why</th>
              <th scope="col">Size</th>
              <th scope="col">Body (start)</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((r) => (
              <tr key={String(r.id)}>
                <td>
                  <time dateTime={r.receivedAt.toISOString()}>{utc(r.receivedAt)}</time>
                </td>
                <td>{r.provider}</td>
                <td>
                  <code>{r.reason}</code>
                  {r.hint && <div>likely: {HINTS[r.hint] ?? r.hint}</div>}
                </td>
                <td title={`sha256 ${r.bodySha256}`}>{r.bodyBytes} bytes</td>
                <td>
                  <code className="body-preview">{r.preview}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.nextBefore !== null && <Link href={`/t/${slug}/events/refused?${next}`}>Older</Link>}
    </>
  );
}
