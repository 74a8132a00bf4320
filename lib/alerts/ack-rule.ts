// The acknowledgement-latency rule: the p99 the overview shows (ackLatencyP99,
// over TALLY_ACK_RECENT_WINDOW_MS) over TALLY_ACK_SLO_MS for TALLY_ALERT_ACK_MINUTES
// in a row. The histogram lives in the web process's memory (the worker never
// acknowledges a webhook), so the web process judges this rule on its own timer
// (workers/web.ts) and feeds the same state table: of several web replicas only
// one opens the alert, as with the worker's rules. The histogram has no tenant
// label: the alert goes to every tenant that has a channel.
import { applyEvaluation, type Transitions } from "@/lib/alerts/evaluate";
import { dashboardLink, type Finding } from "@/lib/alerts/rules";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { type AckLatency, ackLatencyP99 } from "@/lib/views/ack-latency";

/** Since when the p99 has been over the objective without a break, in this process. */
export type AckWatch = { overSince: number | null };

/** Over the objective for long enough: the alert's text; otherwise null. Updates the watch. */
export function judgeAck(ack: AckLatency, watch: AckWatch, now: number, forMs: number): string | null {
  const w = ack.recent;
  if (w.tone !== "bad") {
    watch.overSince = null;
    return null;
  }
  watch.overSince ??= now;
  if (now - watch.overSince < forMs) return null;
  const p99 =
    w.p99.kind === "none" ? "" : `${w.p99.kind === "above" ? "more than " : ""}${Math.round(w.p99.seconds * 1000)} ms`;
  return `Webhook acknowledgements: p99 ${p99} over the last ${Math.round(w.windowMs / 60_000)} minutes (${w.deliveries} deliveries), above the ${Math.round(ack.sloSeconds * 1000)} ms objective for ${Math.round((now - watch.overSince) / 60_000)} minutes. Providers retry slow acknowledgements, and some disable endpoints that stay slow.`;
}

export async function evaluateAckAlerts(
  watch: AckWatch,
  now = Date.now(),
): Promise<(Transitions & { tenant: string })[]> {
  const message = judgeAck(await ackLatencyP99(now), watch, now, config().TALLY_ALERT_ACK_MINUTES * 60_000);
  const tenants = await prisma.tenant.findMany({
    where: { alertChannels: { some: { enabled: true } } },
    select: { id: true, slug: true },
  });
  const out: (Transitions & { tenant: string })[] = [];
  for (const t of tenants) {
    const findings: Finding[] = message
      ? [
          {
            rule: "ack_p99",
            subject: "all",
            title: "webhook acknowledgements are slow",
            message,
            link: dashboardLink(t.slug, ""),
          },
        ]
      : [];
    out.push({ tenant: t.slug, ...(await applyEvaluation(t, { evaluated: ["ack_p99"], findings })) });
  }
  return out;
}
