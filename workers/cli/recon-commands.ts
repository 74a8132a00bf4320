// recon commands: run a reconciliation, list runs, read the trend.
import { cliActor } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { Provider } from "@/lib/generated/prisma/enums";
import { adapterFor } from "@/lib/providers";
import { runReconciliation } from "@/lib/recon/run";
import { lookbackDaysFor, lookbackWindow, windowEndingBy } from "@/lib/recon/schedule";
import {
  CONTROL_MIN_HISTORY_DAYS,
  CONTROL_WINDOW_DAYS,
  controlByProvider,
  describeBreach,
  discrepancyHistory,
  percent,
  type ProviderJudgement,
  trendSummary,
} from "@/lib/recon/trend";
import { reportFormats } from "@/lib/recon/report-formats";
import { flags, orFail, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

const DAY = 86_400_000;
const parseDay = (flag: string, v: unknown) => {
  const text = String(v);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`)))
    throw new UsageError(`--${flag} must be a date, YYYY-MM-DD; got "${text}"`);
  return new Date(`${text}T00:00:00Z`);
};

export const reconCommands: Command[] = [
  {
    name: "recon run",
    summary: "Reconcile a window against the provider's settlement API, or a report file (--file)",
    options: flags({
      tenant: "string",
      provider: "string",
      date: "string",
      from: "string",
      to: "string",
      file: "string",
      format: "string",
      json: "boolean",
    }),
    required: ["tenant", "provider"],
    database: true,
    async run(a) {
      const adapter = adapterFor(String(a.provider));
      if (!adapter) throw new UsageError(`Unknown provider "${a.provider}"`);
      if (a.date !== undefined && (a.from !== undefined || a.to !== undefined))
        throw new UsageError("Give --date, or --from and --to, not both");
      if ((a.from === undefined) !== (a.to === undefined))
        throw new UsageError("--from and --to go together (both days inclusive)");
      if (a.format !== undefined && !reportFormats().includes(String(a.format)))
        throw new UsageError(`--format must be ${reportFormats().join(", ")} (default: detected from the header)`);
      let window =
        a.date !== undefined
          ? { from: parseDay("date", a.date), to: new Date(parseDay("date", a.date).getTime() + DAY) }
          : a.from !== undefined
            ? { from: parseDay("from", a.from), to: new Date(parseDay("to", a.to).getTime() + DAY) }
            : undefined;
      const tenant = await requireTenant(a.tenant);
      if (!window && a.file === undefined) {
        const endpoint = await prisma.providerEndpoint.findUnique({
          where: { tenantId_provider: { tenantId: tenant.id, provider: adapter.provider } },
        });
        window = lookbackWindow(new Date(), lookbackDaysFor((endpoint?.settings ?? {}) as Record<string, unknown>));
      }
      if (window) {
        const asked = window;
        window = windowEndingBy(asked, new Date()) ?? undefined;
        if (!window)
          throw new UsageError(
            `The window starts after now (${asked.from.toISOString()}): nothing can have settled there yet`,
          );
      }
      const source =
        a.file !== undefined
          ? {
              kind: "csv" as const,
              file: String(a.file),
              format: a.format === undefined ? undefined : String(a.format),
            }
          : { kind: "api" as const };
      const r = orFail(
        await runReconciliation({
          tenantId: tenant.id,
          provider: adapter.provider as Provider,
          window,
          source,
          actor: cliActor(),
        }),
      );
      if (a.json) return printJson(r);
      console.log(
        `Run ${r.runId}: ${r.window.from.toISOString()} → ${r.window.to.toISOString()}, ${r.compared} compared in ${r.durationMs} ms`,
      );
      console.log(
        table([
          { bucket: "matched", items: r.matched, note: "" },
          {
            bucket: "theirs-not-ours",
            items: r.theirsNotOurs,
            note: `${r.fetched} fetched and queued, ${r.inFlight} already held, ${r.fetchFailed} could not be fetched`,
          },
          { bucket: "ours-not-theirs", items: r.oursNotTheirs, note: "a person decides (cases)" },
          { bucket: "mismatch", items: r.mismatched, note: "a person decides (cases)" },
        ]),
      );
      console.log(
        `${r.newDiscrepancies} new discrepancies, ${r.casesOpened} cases opened, ${r.resolvedOnRecheck} resolved on re-check${r.linesOutsideWindow ? `, ${r.linesOutsideWindow} report lines outside the window skipped` : ""}.`,
      );
      if (r.silence.alert)
        console.log(
          `ALERT: ${r.silence.settledLines} settled lines but only ${r.silence.webhooksReceived} webhooks received in the window: check the webhook endpoint at the provider.`,
        );
    },
  },
  {
    name: "recon runs",
    summary: "List a tenant's recent reconciliation runs",
    options: flags({ tenant: "string", limit: "string" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const runs = await prisma.reconRun.findMany({
        where: { tenantId: tenant.id },
        orderBy: { id: "desc" },
        take: Number(a.limit ?? 20),
      });
      console.log(
        table(
          runs.map((r) => ({
            id: r.id,
            provider: r.provider,
            from: r.windowFrom,
            to: r.windowTo,
            source: r.sourceName ?? r.source,
            by: r.actorLabel,
            status: r.status,
            matched: r.matched,
            theirs: r.theirsNotOurs,
            ours: r.oursNotTheirs,
            mismatch: r.mismatched,
            ms: r.durationMs ?? "",
            error: r.error ?? "",
          })),
        ),
      );
    },
  },
  {
    name: "recon trend",
    summary: "The daily discrepancy count by cause, each day against its control limit, and the 30-day verdict",
    options: flags({ tenant: "string", days: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const days = a.days === undefined ? 30 : Number(a.days);
      if (!Number.isInteger(days) || days < 1) throw new UsageError("--days must be a positive whole number");
      const tenant = await requireTenant(a.tenant);
      const to = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
      const from = new Date(to.getTime() - days * DAY);
      // The first day's control limit needs the 30 days before it.
      const points = await discrepancyHistory(tenant.id, new Date(from.getTime() - CONTROL_WINDOW_DAYS * DAY), to);
      const shown = points.filter((p) => p.day >= from.toISOString().slice(0, 10));
      const judged = new Map(
        controlByProvider(points, from.toISOString().slice(0, 10)).map((j) => [`${j.provider} ${j.day}`, j]),
      );
      const breaches = [...judged.values()].filter((j) => j.status === "breach");
      const trend = await trendSummary(tenant.id);
      if (a.json)
        return printJson({ days: shown, control: [...judged.values()], breaches: breaches.map(describeBreach), trend });
      const limitText = (j: ProviderJudgement | undefined) =>
        !j || j.status === "nothing_compared"
          ? "nothing compared"
          : j.status === "not_enough_history"
            ? `not enough history (${j.historyDays} of ${CONTROL_MIN_HISTORY_DAYS} days)`
            : `${percent(j.limit!)}${j.status === "breach" ? " BREACH" : ""}`;
      console.log(
        table(
          shown.map((p) => {
            const j = judged.get(`${p.provider} ${p.day}`);
            return {
              day: p.day,
              provider: p.provider,
              compared: p.compared,
              discrepancies: p.discrepancies,
              rate: j?.rate === null || j?.rate === undefined ? "" : percent(j.rate),
              limit: limitText(j),
              causes: Object.entries(p.byCause)
                .map(([cause, n]) => `${cause.toLowerCase().replace(/_/g, " ")} ${n}`)
                .join(", "),
              "theirs-not-ours": p.theirsNotOurs,
              "ours-not-theirs": p.oursNotTheirs,
              mismatch: p.mismatched,
            };
          }),
        ),
      );
      console.log(
        breaches.length
          ? `\nBreaches: ${breaches.map(describeBreach).join("; ")}`
          : "\nNo day above its control limit (p-chart over the 30 days before each).",
      );
      console.log(`\nLast 30 days: ${trend.overall.verdict.toUpperCase()}. ${trend.overall.reading}`);
      for (const [provider, v] of Object.entries(trend.byProvider))
        console.log(`  ${provider}: ${v.verdict} (${v.reading})`);
    },
  },
];
