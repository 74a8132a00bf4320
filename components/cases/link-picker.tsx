"use client";
// Choosing the settlement lines a link ties to the case's posting: each line the
// provider reported that is not ours yet (the case's own, for a mismatch), ticked
// by the proposer, with the running sum against the posting's amount. The server
// checks the same sum, and the database again when the link is approved.
import { formatMoney } from "@/components/money";

export type LinkCandidateLine = {
  discrepancyId: string;
  reference: string;
  bucket: string;
  state: string;
  day: string;
  amount: string;
  currency: string;
  own: boolean;
};

export type LinkCandidates = { postingId: string; amount: string; currency: string; lines: LinkCandidateLine[] };

export function linkTotal(c: LinkCandidates, chosen: readonly string[]): bigint {
  return c.lines.filter((l) => chosen.includes(l.discrepancyId)).reduce((s, l) => s + BigInt(l.amount), 0n);
}

export function LinkPicker({
  candidates,
  chosen,
  onChange,
}: {
  candidates: LinkCandidates;
  chosen: string[];
  onChange: (chosen: string[]) => void;
}) {
  const total = linkTotal(candidates, chosen);
  const target = BigInt(candidates.amount);
  const gap = target - total;
  const m = (a: bigint | string) => formatMoney(a, candidates.currency);
  if (candidates.lines.length === 0)
    return (
      <p className="notice" data-testid="link-none">
        No settlement line of this provider in {candidates.currency} within two weeks is waiting to be matched: there is
        nothing to link posting #{candidates.postingId} to.
      </p>
    );
  return (
    <div className="plan stack" data-testid="link-picker">
      <table className="table compact">
        <caption className="small" style={{ textAlign: "left", captionSide: "top", padding: ".25rem 0" }}>
          Tick the provider&apos;s lines that together are our posting #{candidates.postingId} ({m(target)})
        </caption>
        <thead>
          <tr>
            <th scope="col">Link</th>
            <th scope="col">Their line</th>
            <th scope="col">Day</th>
            <th scope="col" className="num">
              Amount
            </th>
          </tr>
        </thead>
        <tbody>
          {candidates.lines.map((l) => {
            const id = `link-line-${l.discrepancyId}`;
            return (
              <tr key={l.discrepancyId}>
                <td>
                  <input
                    id={id}
                    type="checkbox"
                    checked={chosen.includes(l.discrepancyId)}
                    onChange={(e) =>
                      onChange(
                        e.target.checked ? [...chosen, l.discrepancyId] : chosen.filter((x) => x !== l.discrepancyId),
                      )
                    }
                  />
                </td>
                <td className="mono">
                  <label htmlFor={id}>{l.reference}</label>
                  <div className="small muted">
                    {l.own
                      ? "this case's line"
                      : `line #${l.discrepancyId}, theirs not ours (${l.state.toLowerCase().replace("_", " ")})`}
                  </div>
                </td>
                <td>{l.day.slice(0, 10)}</td>
                <td className="num">{m(l.amount)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className={gap === 0n ? "small tone-good" : "small tone-warn"} data-testid="link-total" aria-live="polite">
        Chosen {m(total)} of {m(target)}:{" "}
        {chosen.length === 0
          ? "tick at least one line"
          : gap === 0n
            ? "adds up"
            : `${m(gap < 0n ? -gap : gap)} ${gap > 0n ? "short" : "over"}: a link must add up exactly`}
      </p>
    </div>
  );
}
