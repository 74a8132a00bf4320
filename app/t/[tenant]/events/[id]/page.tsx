// One event: the body as received, stored headers, what happened to it
// (received → claimed → done / duplicate / ignored / failed), its postings and receipts.
import Link from "next/link";
import { DebitCreditCells } from "@/components/debit-credit";
import { RawBody } from "@/components/raw-body";
import { StatusBadge } from "@/components/status-badge";
import { mayUse } from "@/lib/auth/roles";
import { shownDelivery } from "@/lib/views/event-signatures";
import { getEvent, type EventDetail } from "@/lib/views/events";
import { TableScroll } from "@/components/table-scroll";
import { num, TableHead } from "@/components/table-head";
import { type DetailParams, openDetail } from "@/app/t/[tenant]/open-detail";

export const dynamic = "force-dynamic";

const at = (d: Date | null | undefined) => (d ? d.toISOString().replace("T", " ").slice(0, 23) : "");

type Step = { when: Date | null; what: React.ReactNode };

function timeline(d: EventDetail, tenant: string): Step[] {
  const e = d.event;
  const steps: Step[] = [
    {
      when: e.receivedAt,
      what: (
        <>
          Received via {e.source.toLowerCase()}
          {e.deliveryId ? (
            <>
              {" "}
              as <code>{e.deliveryId}</code>
            </>
          ) : null}
        </>
      ),
    },
  ];
  for (const c of d.claims) {
    steps.push({
      when: c.createdAt,
      what: (
        <>
          Claimed <code>{c.providerReference}</code> (claim #{c.id.toString()}, attempt {c.attempts})
        </>
      ),
    });
    if (c.status === "DONE")
      steps.push({
        when: c.doneAt,
        what: (
          <>
            Posted <code>{c.providerReference}</code>
            {c.posting ? <> as posting #{c.posting.id.toString()}</> : null}
          </>
        ),
      });
    if (c.status === "FAILED")
      steps.push({
        when: null,
        what: <span className="error">Claim failed: {c.lastError ?? "no error recorded"}</span>,
      });
    if (c.status === "CLAIMED")
      steps.push({
        when: c.claimedAt,
        what: c.claimedAt ? (
          <>Being processed by a worker</>
        ) : (
          <>Released; waiting for a worker{c.lastError ? `: ${c.lastError}` : ""}</>
        ),
      });
  }
  if (e.status === "DUPLICATE" && e.duplicateOfId)
    steps.push({
      when: e.processedAt,
      what: (
        <>
          Duplicate of <Link href={`/t/${tenant}/events/${e.duplicateOfId}`}>#{e.duplicateOfId.toString()}</Link>:
          nothing posted again
        </>
      ),
    });
  if (e.status === "IGNORED")
    steps.push({ when: e.processedAt, what: <>Ignored: moves no money{e.note ? ` (${e.note})` : ""}</> });
  if (e.status === "FAILED")
    steps.push({
      when: e.processedAt,
      what: (
        <span className="error">
          Failed after {e.attempts} attempt{e.attempts === 1 ? "" : "s"}: {e.lastError ?? "no error recorded"}
        </span>
      ),
    });
  if (e.status === "DONE") steps.push({ when: e.processedAt, what: <>Done</> });
  if (e.status === "RECEIVED") steps.push({ when: null, what: <>Waiting for the worker</> });
  return steps;
}

export default async function EventPage({ params }: { params: DetailParams }) {
  const open = await openDetail(params, "events", "Events", getEvent);
  if (!open.ok) return open.page;
  const { principal, slug, detail } = open.opened;
  const e = detail.event;
  const shown = shownDelivery(e);
  const postings = detail.claims.flatMap((c) => (c.posting ? [c.posting] : []));
  const seesLedger = mayUse(principal.role, "ledger");
  return (
    <>
      <p>
        <Link href={`/t/${slug}/events`}>← Events</Link>
      </p>
      <h1>
        Event #{e.id.toString()} <StatusBadge status={e.status} />
      </h1>
      <dl className="facts">
        <dt>Provider</dt>
        <dd>{e.provider}</dd>
        <dt>Type</dt>
        <dd>{e.eventType ?? "not parsed yet"}</dd>
        <dt>Delivery id</dt>
        <dd className="mono">{e.deliveryId ?? "—"}</dd>
        <dt>Received</dt>
        <dd>{at(e.receivedAt)} UTC</dd>
      </dl>

      <h2>Timeline</h2>
      <ol className="timeline">
        {timeline(detail, slug).map((s, i) => (
          <li key={i}>
            {s.when && <time dateTime={s.when.toISOString()}>{at(s.when)}</time>} {s.what}
          </li>
        ))}
      </ol>
      {detail.duplicates.length > 0 && (
        <p>
          Later deliveries of the same movement:{" "}
          {detail.duplicates.map((d, i) => (
            <span key={d.id.toString()}>
              {i ? ", " : ""}
              <Link href={`/t/${slug}/events/${d.id}`}>#{d.id.toString()}</Link>
            </span>
          ))}
        </p>
      )}

      <h2>Postings</h2>
      {postings.length === 0 ? (
        <p className="muted">
          No posting:{" "}
          {e.status === "RECEIVED" || e.status === "CLAIMED"
            ? "the worker has not posted this event yet."
            : "this event posted nothing itself."}
        </p>
      ) : (
        postings.map((p) => (
          <section key={p.id.toString()} className="panel" aria-label={`Posting ${p.id}`}>
            <h3>
              Posting #{p.id.toString()} · {p.kind.toLowerCase()} · {p.description}
            </h3>
            <TableScroll label={`Posting ${p.id} legs`}>
              <table className="table">
                <TableHead columns={["Account", num("Debit"), num("Credit")]} />
                <tbody>
                  {p.entries.map((en) => (
                    <tr key={en.id.toString()}>
                      <td>
                        {seesLedger ? (
                          <Link href={`/t/${slug}/ledger/${en.account.id}`}>{en.account.code}</Link>
                        ) : (
                          en.account.code
                        )}
                      </td>
                      <DebitCreditCells amount={en.amount} currency={en.currency} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <h4>Receipts</h4>
            {p.outbox.length === 0 ? (
              <p className="muted">No receipt queued for this posting.</p>
            ) : (
              <ul>
                {p.outbox.map((o) => (
                  <li key={o.id.toString()}>
                    {o.kind} #{o.id.toString()}:{" "}
                    {o.sentAt ? (
                      <>sent {at(o.sentAt)}</>
                    ) : (
                      <>
                        not sent yet ({o.attempts} attempt{o.attempts === 1 ? "" : "s"}
                        {o.lastError ? `, last error: ${o.lastError}` : ""}; next try {at(o.availableAt)})
                      </>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </section>
        ))
      )}

      <h2>Signature</h2>
      <p data-testid="signature">
        {shown.signature.present ? (
          <>Signature present, verified by {shown.signature.verifiedBy}.</>
        ) : (
          <>No signature: {shown.signature.why}.</>
        )}
        {shown.signature.redacted.length > 0 && (
          <>
            {" "}
            Not shown: <span className="mono">{shown.signature.redacted.join(", ")}</span> (a stored signature could be
            replayed or reused for a forged body).
          </>
        )}
      </p>

      <h2>Body</h2>
      {shown.body.purged ? (
        <p data-testid="body-purged">
          Removed on <time dateTime={shown.body.purgedAt.toISOString()}>{at(shown.body.purgedAt)}</time>, after this
          tenant&apos;s retention of raw bodies. Its SHA-256 was kept: <span className="mono">{shown.body.sha256}</span>
          .
        </p>
      ) : (
        <RawBody
          bytes={new Uint8Array(Buffer.from(shown.body.base64, "base64"))}
          text={shown.body.text}
          receivedBytes={shown.body.bytes}
          redacted={shown.body.redacted}
        />
      )}

      <h2>Headers</h2>
      <TableScroll label="Headers">
        <table className="table headers">
          <TableHead columns={["Name", "Value"]} />
          <tbody>
            {Object.entries(shown.headers).map(([k, v]) => (
              <tr key={k}>
                <td className="mono">{k}</td>
                <td className="mono wrap">{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </>
  );
}
