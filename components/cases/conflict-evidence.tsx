// A conflict case's evidence: what the claim holds beside what the disagreeing
// delivery says, and every delivery involved exactly as received, side by side.
import Link from "next/link";
import { utc } from "@/components/format";

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
  kind: "DIFFERENT_RETRY" | "OVER_REFUND";
  claimed: Record<string, unknown>;
  delivered: Record<string, unknown>;
  raws: ConflictRaw[];
};

const side = (v: Record<string, unknown>) =>
  JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x), 2);

export function ConflictEvidence(p: ConflictEvidenceProps) {
  return (
    <>
      <h2>Evidence</h2>
      <p>
        {p.kind === "OVER_REFUND"
          ? "This refund would take the payment's refunded total past its amount: it is held, not posted."
          : "A delivery of an already-claimed reference says different money: it is not posted, and neither is anything changed."}
      </p>
      <div className="evidence">
        <section aria-labelledby="cf-claimed">
          <h3 id="cf-claimed">{p.kind === "OVER_REFUND" ? "The payment and its refunds" : "What the claim holds"}</h3>
          <pre tabIndex={0}>{side(p.claimed)}</pre>
        </section>
        <section aria-labelledby="cf-delivered">
          <h3 id="cf-delivered">{p.kind === "OVER_REFUND" ? "The refund held" : "What this delivery says"}</h3>
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
