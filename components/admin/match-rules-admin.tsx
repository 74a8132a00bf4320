"use client";
// Each provider endpoint's matching rules, as an admin sets them: the amount tolerance
// (minor units, the same number in every currency), the bank date lag, the order the
// bank step tries its rules in, the signature tolerance and whether deliveries are
// accepted. The server checks every value and says what it refused; every save is
// audited with the values before and after and the reason given here.
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import { api } from "@/components/api-client";
import { useAdminMutation } from "@/components/admin/use-admin-mutation";

type Rule = "reference" | "amount_date";
type MatchRules = { toleranceMinor: string; dateLagDays: number; priority: string[] };
type RulesEndpoint = {
  id: string;
  provider: string;
  enabled: boolean;
  toleranceSeconds: number;
  matchRules: MatchRules;
};
export type MatchRulesData = { endpoints: RulesEndpoint[] };
type Change = {
  enabled: boolean;
  toleranceSeconds: number;
  matchRules: { toleranceMinor: string; dateLagDays: number; priority: Rule[] };
  reason?: string;
};

const RULE_LABEL: Record<Rule, string> = {
  reference: "reference (the payout's reference in the bank's text)",
  amount_date: "amount and date (within the tolerance and the lag)",
};
const other = (r: Rule): Rule => (r === "reference" ? "amount_date" : "reference");
const NONE = "none";

export function MatchRulesAdmin({ tenant, initial }: { tenant: string; initial: MatchRulesData }) {
  // The same query as the secrets' list, so a save here refreshes both (an endpoint turned off shows there too).
  const { data } = useQuery({
    queryKey: ["endpoints", tenant],
    queryFn: () => api<MatchRulesData>(`/api/v1/tenants/${tenant}/endpoints`),
    initialData: initial,
  });
  return (
    <section aria-labelledby="match-rules-h">
      <h2 id="match-rules-h">Matching rules</h2>
      <p className="muted">
        How each provider&apos;s reconciliation matches: amounts that differ by no more than the tolerance match as
        “within tolerance” (listed on the run, never silent), and the bank step looks for a payout&apos;s credit in the
        order below. Every run shows the rules it used; a change applies from the next run.
      </p>
      {data.endpoints.length === 0 && <p className="muted">No provider endpoint yet: add a secret above first.</p>}
      {data.endpoints.map((ep) => (
        <EndpointRules key={ep.id} tenant={tenant} endpoint={ep} />
      ))}
    </section>
  );
}

function EndpointRules({ tenant, endpoint }: { tenant: string; endpoint: RulesEndpoint }) {
  const saved = endpoint.matchRules;
  const [first, setFirst] = useState<Rule>((saved.priority[0] as Rule | undefined) ?? "reference");
  const [then, setThen] = useState<string>(saved.priority[1] ?? NONE);
  const [done, setDone] = useState<string | null>(null);
  const save = useAdminMutation<Change, RulesEndpoint>(
    (body) => ({ path: `/api/v1/tenants/${tenant}/endpoints/${endpoint.provider}`, method: "PATCH", body }),
    ["endpoints", tenant],
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    setDone(null);
    const reason = String(f.get("reason") ?? "").trim();
    save.mutate(
      {
        enabled: f.get("enabled") === "on",
        toleranceSeconds: Number(f.get("toleranceSeconds")),
        matchRules: {
          // Sent as typed: the server reads minor units without a float, and says why "0.05" is not one.
          toleranceMinor: String(f.get("toleranceMinor") ?? "").trim(),
          dateLagDays: Number(f.get("dateLagDays")),
          priority: then === NONE ? [first] : [first, then as Rule],
        },
        ...(reason && { reason }),
      },
      {
        onSuccess: (r) => {
          setDone(
            `Saved: within ${r.matchRules.toleranceMinor} minor units, ${r.matchRules.dateLagDays} days' lag, ${r.matchRules.priority.map((x) => (x === "amount_date" ? "amount and date" : x)).join(" then ")}; signatures ${r.toleranceSeconds} s; ${r.enabled ? "accepting deliveries" : "deliveries refused"}.`,
          );
          // Only the reason is cleared: the other fields take the saved values when the list refreshes.
          const why = form.elements.namedItem("reason");
          if (why instanceof HTMLInputElement) why.value = "";
        },
      },
    );
  }

  const p = endpoint.provider;
  return (
    <form
      onSubmit={submit}
      className="panel form-grid"
      aria-label={`Matching rules for ${p}`}
      data-testid={`match-rules-${p}`}
    >
      <h3>
        {p} <span className="muted">{endpoint.enabled ? "" : "(disabled)"}</span>
      </h3>
      <label>
        Amount tolerance (minor units)
        <input
          name="toleranceMinor"
          aria-describedby={`${p}-tolerance-help`}
          inputMode="numeric"
          autoComplete="off"
          required
          defaultValue={saved.toleranceMinor}
          key={`tol-${saved.toleranceMinor}`}
        />
      </label>
      <p id={`${p}-tolerance-help`} className="muted small">
        In the currency&apos;s smallest unit, whatever the currency: 5 is 0.05 USD or EUR, 5 JPY, 0.005 KWD. A whole
        number from 0 (amounts must agree exactly) to 1,000,000.
      </p>
      <WholeNumberField
        name="dateLagDays"
        label="Bank date lag (days)"
        helpId={`${p}-lag-help`}
        max={60}
        value={saved.dateLagDays}
      >
        A payout&apos;s bank credit may be booked up to this many days after its arrival date.
      </WholeNumberField>
      <fieldset>
        <legend>Order the bank step tries its rules in</legend>
        <label>
          First
          <select
            name="first"
            value={first}
            onChange={(e) => {
              const r = e.target.value as Rule;
              setFirst(r);
              if (then !== NONE) setThen(other(r));
            }}
          >
            {(["reference", "amount_date"] as const).map((r) => (
              <option key={r} value={r}>
                {RULE_LABEL[r]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Then
          <select name="then" value={then} onChange={(e) => setThen(e.target.value)}>
            <option value={other(first)}>{RULE_LABEL[other(first)]}</option>
            <option value={NONE}>nothing else</option>
          </select>
        </label>
      </fieldset>
      <WholeNumberField
        name="toleranceSeconds"
        label="Signature tolerance (seconds)"
        helpId={`${p}-signature-help`}
        max={86400}
        value={endpoint.toleranceSeconds}
      >
        How old a timestamped signature may be (and how far the provider&apos;s clock may be ahead) before a delivery is
        refused.
      </WholeNumberField>
      <label className="inline">
        <input name="enabled" type="checkbox" defaultChecked={endpoint.enabled} key={`on-${endpoint.enabled}`} /> Accept
        deliveries (off: every webhook to this endpoint is refused, and the provider retries)
      </label>
      <label>
        Why (for the audit log)
        <input name="reason" maxLength={500} />
      </label>
      <button type="submit" disabled={save.isPending}>
        {save.isPending ? "Saving…" : "Save matching rules"}
      </button>
      {done && !save.error && (
        <p role="status" className="notice">
          {done}
        </p>
      )}
      {save.error && (
        <p role="alert" className="error">
          {save.error.message}
        </p>
      )}
    </form>
  );
}

/** A whole number from 0 to `max` with its help text; keyed by the saved value so a refreshed list shows it. */
function WholeNumberField(props: {
  name: string;
  label: string;
  helpId: string;
  max: number;
  value: number;
  children: ReactNode;
}) {
  return (
    <>
      <label>
        {props.label}
        <input
          name={props.name}
          aria-describedby={props.helpId}
          type="number"
          required
          min={0}
          max={props.max}
          step={1}
          defaultValue={props.value}
          key={`${props.name}-${props.value}`}
        />
      </label>
      <p id={props.helpId} className="muted small">
        {props.children}
      </p>
    </>
  );
}
