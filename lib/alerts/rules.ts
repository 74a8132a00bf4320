// The alert rules: what is wrong for a tenant right now, each finding named by
// (rule, subject) with a message and the dashboard page to open. Every figure
// comes from the function the overview or the page it links to already uses
// (countStuck, countDeadReceipts, trendSummary, latestReconRun, the silence
// alerts the reconciliation raises), so a notification and the screen it links
// to never disagree about what they count.
import { config } from "@/lib/platform/config";
import { countDeadReceipts } from "@/lib/pipeline/dead-letters";
import { latestReconRun } from "@/lib/recon/runs";
import { scheduledEndpoints, scheduledTimeOn, startOfUtcDay } from "@/lib/recon/schedule";
import { trendSummary } from "@/lib/recon/trend";
import { unclearedAlerts } from "@/lib/views/overview";
import { refusalsByProvider } from "@/lib/views/refused";
import { countStuck } from "@/lib/views/stuck-claims";

/** The rules the worker judges; ack_p99 is judged by the web process (lib/alerts/ack-rule.ts), where the histogram lives. */
export const WORKER_RULES = [
  "webhook_silence",
  "stuck_claims",
  "failed_claims",
  "conflicts",
  "discrepancy_trend",
  "dead_receipts",
  "recon_run",
  "refused_deliveries",
] as const;
export type AlertRule = (typeof WORKER_RULES)[number] | "ack_p99";

/** One condition that holds now. `subject` tells apart several of one rule (a provider), or "all". */
export type Finding = { rule: AlertRule; subject: string; title: string; message: string; link: string };

export type Evaluation = {
  /** Rules that were judged: an open alert of one of these that has no finding clears. */
  evaluated: AlertRule[];
  findings: Finding[];
};

export function dashboardLink(
  tenantSlug: string,
  page: "" | "claims" | "claims/dead-receipts" | "reconciliation" | "events/refused",
) {
  return `${config().TALLY_PUBLIC_URL}/t/${encodeURIComponent(tenantSlug)}${page ? `/${page}` : ""}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export async function evaluateRules(tenant: { id: string; slug: string }, now = new Date()): Promise<Evaluation> {
  const c = config();
  const [silences, stuck, dead, trend, endpoints, refusals] = await Promise.all([
    unclearedAlerts(tenant.id, 100),
    countStuck(tenant.id, c.TALLY_STALE_CLAIM_MS),
    countDeadReceipts(tenant.id, {}),
    trendSummary(tenant.id, now),
    scheduledEndpoints(tenant.id),
    refusalsByProvider(tenant.id, new Date(now.getTime() - 3600_000)),
  ]);
  const findings: Finding[] = [];
  const claims = dashboardLink(tenant.slug, "claims");

  for (const a of silences.filter((a) => a.kind === "webhook_silence"))
    findings.push({
      rule: "webhook_silence",
      subject: a.provider ?? "all",
      title: `${a.provider ?? "A provider"}'s webhooks have gone silent`,
      message: a.message,
      link: dashboardLink(tenant.slug, ""),
    });

  const held = stuck.stale_claim + stuck.waiting_claim;
  if (held > c.TALLY_ALERT_STUCK_CLAIMS)
    findings.push({
      rule: "stuck_claims",
      subject: "all",
      title: `${plural(held, "claim")} stuck`,
      message: `${plural(held, "claim")} held or waiting for longer than ${Math.round(c.TALLY_STALE_CLAIM_MS / 60_000)} minutes (threshold: more than ${c.TALLY_ALERT_STUCK_CLAIMS}).`,
      link: claims,
    });
  const failed = stuck.failed_claim + stuck.failed_event;
  if (failed > 0)
    findings.push({
      rule: "failed_claims",
      subject: "all",
      title: `${plural(failed, "event")} failed`,
      message: `${plural(stuck.failed_claim, "claim")} gave up after their attempts and ${plural(stuck.failed_event, "event")} could not be read: none of them is posted until someone reprocesses it.`,
      link: claims,
    });
  if (stuck.conflict > 0)
    findings.push({
      rule: "conflicts",
      subject: "all",
      title: `${plural(stuck.conflict, "conflicting delivery", "conflicting deliveries")}`,
      message: `${plural(stuck.conflict, "delivery", "deliveries")} disagree with what was already posted for the same reference; an accountant decides each in its case.`,
      link: claims,
    });

  for (const [provider, v] of Object.entries(trend.byProvider)) {
    if (v.days < c.TALLY_ALERT_TREND_MIN_DAYS) continue;
    if (v.verdict === "rising" || (v.verdict === "flat" && v.meanPerDay > 0))
      findings.push({
        rule: "discrepancy_trend",
        subject: provider,
        title: `${provider}'s discrepancies are ${v.verdict === "rising" ? "rising" : "not falling"}`,
        message: `${v.reading} (over ${v.days} reconciled days)`,
        link: dashboardLink(tenant.slug, ""),
      });
  }

  if (dead > 0)
    findings.push({
      rule: "dead_receipts",
      subject: "all",
      title: `${plural(dead, "receipt")} dead-lettered`,
      message: `${plural(dead, "receipt")} ran out of delivery retries and will not be sent again until someone redelivers them.`,
      link: dashboardLink(tenant.slug, "claims/dead-receipts"),
    });

  // A provider whose signatures keep failing: a secret rotated on one side only refuses every
  // delivery while the provider retries, and the money shows up only at the next reconciliation.
  for (const r of refusals.filter((r) => r.refused > c.TALLY_ALERT_REFUSED_PER_HOUR))
    findings.push({
      rule: "refused_deliveries",
      subject: r.provider,
      title: `${plural(r.refused, `${r.provider} delivery`, `${r.provider} deliveries`)} refused in the last hour`,
      message: `${plural(r.refused, "delivery", "deliveries")} to the ${r.provider} endpoint failed verification in the last hour (threshold: more than ${c.TALLY_ALERT_REFUSED_PER_HOUR}); most: ${r.reason}${r.hint ? `, likely ${r.hint}` : ""}. Check the endpoint's signing secret against the provider's.`,
      link: dashboardLink(tenant.slug, "events/refused"),
    });

  // The daily run: the newest run of each scheduled provider failed, or today's is
  // overdue by more than the grace period (the worker was down, the schedule stuck).
  const today = startOfUtcDay(now);
  const due = scheduledTimeOn(today);
  for (const e of endpoints) {
    const last = await latestReconRun(tenant.id, e.provider);
    const reconciliation = dashboardLink(tenant.slug, "reconciliation");
    if (last?.status === "FAILED")
      findings.push({
        rule: "recon_run",
        subject: e.provider,
        title: `${e.provider} reconciliation failed`,
        message: `Run ${last.id} started ${last.startedAt.toISOString()} failed: ${last.error ?? "no error recorded"}`,
        link: reconciliation,
      });
    else if (
      due !== null &&
      now.getTime() > due.getTime() + c.TALLY_ALERT_RECON_GRACE_MS &&
      !(last?.scheduledFor && last.scheduledFor.getTime() >= today.getTime()) &&
      !(last && last.startedAt.getTime() >= due.getTime())
    )
      findings.push({
        rule: "recon_run",
        subject: e.provider,
        title: `${e.provider} reconciliation did not run`,
        message: `Today's run was due at ${due.toISOString()} and has not started${last ? ` (the last one started ${last.startedAt.toISOString()})` : ""}: is the worker running?`,
        link: reconciliation,
      });
  }

  return { evaluated: [...WORKER_RULES], findings };
}
