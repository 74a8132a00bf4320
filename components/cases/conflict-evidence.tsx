// A conflict case's evidence: what the claim holds beside what the disagreeing
// delivery says, and every delivery involved exactly as received, side by side.
import Link from "next/link";
import { utc } from "@/components/format";
import { CONFLICT_KIND_LABEL, type ConflictKindCode } from "@/lib/cases/labels";

export type ConflictRaw = {
  id: string;
  status: string;
  eventType: string | null;
  receivedAt: Date;
  body: string | null;
  /** null once the body was removed after the tenant's retention (bodyPurgedAt). */
  bytes: number | null;
  bodyPurgedAt: Date | null;
  conflicting: boolean;
};
export type ConflictEvidenceProps = {
  tenant: string;
  kind: ConflictKindCode;
  claimed: Record<string, unknown>;
  delivered: Record<string, unknown>;
  raws: ConflictRaw[];
};

const side = (v: Record<string, unknown>) =>
  JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x), 2);

export function ConflictEvidence(p: ConflictEvidenceProps) {
  const words = CONFLICT_KIND_LABEL[p.kind];
  return (
    <>
      <h2>Evidence</h2>
      <p>{words.explained}</p>
      <div className="evidence">
        <section aria-labelledby="cf-claimed">
          <h3 id="cf-claimed">{words.claimed}</h3>
          <pre tabIndex={0}>{side(p.claimed)}</pre>
        </section>
        <section aria-labelledby="cf-delivered">
          <h3 id="cf-delivered">{words.delivered}</h3>
          <pre tabIndex={0}>{side(p.delivered)}</pre>
        </section>
      </div>
      <div className="evidence" data-testid="conflict-bodies">
        {p.raws.map((r) => (
          <section key={r.id} aria-label={`Raw body of event ${r.id}`}>
            <h3>
              <Link href={`/t/${p.tenant}/events/${r.id}`}>Event #{r.id}</Link>
              {r.conflicting ? " (the conflicting delivery)" : ""}
            </h3>
            <p className="small">
              {r.eventType ?? "type unknown"} · {r.status.toLowerCase()} · received {utc(r.receivedAt)} UTC
            </p>
            <pre tabIndex={0}>{bodyOrWhyNot(r)}</pre>
          </section>
        ))}
      </div>
    </>
  );
}

/** The body as text, or why it is not shown: not UTF-8 (the event page has a hex view), or removed after retention. */
export function bodyOrWhyNot(r: { body: string | null; bytes: number | null; bodyPurgedAt: Date | null }): string {
  if (r.body !== null) return r.body;
  if (r.bodyPurgedAt)
    return `Removed ${utc(r.bodyPurgedAt)} UTC after the tenant's retention of raw bodies; its SHA-256 is on the event page`;
  return `${r.bytes} bytes, not UTF-8: open the event page for a hex view`;
}
