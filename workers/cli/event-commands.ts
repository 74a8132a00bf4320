// events commands: what arrived, and in what state.
import { prisma } from "@/lib/platform/db";
import { listEvents, RAW_EVENT_STATUSES } from "@/lib/views/events";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import { cliActor } from "@/lib/admin/audit";
import { config } from "@/lib/platform/config";
import { reprocessEvent, reprocessFailed } from "@/lib/pipeline/reprocess";
import { flags, orFail, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

export const eventCommands: Command[] = [
  {
    name: "events list",
    summary: "List a tenant's newest raw events",
    options: flags({ tenant: "string", status: "string", reference: "string", limit: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const status = a.status === undefined ? undefined : String(a.status).toUpperCase();
      if (status && !RAW_EVENT_STATUSES.includes(status as RawEventStatus))
        throw new UsageError(`--status must be one of ${RAW_EVENT_STATUSES.join(", ")}`);
      const limit = a.limit === undefined ? 50 : Number(a.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number`);
      const tenant = await requireTenant(a.tenant);
      const events = await listEvents({
        tenantId: tenant.id,
        status: status as RawEventStatus | undefined,
        reference: a.reference as string | undefined,
        limit,
      });
      if (a.json) return printJson(events);
      console.log(
        table(
          events.map((e) => ({
            id: e.id,
            provider: e.provider,
            source: e.source,
            status: e.status,
            received: e.receivedAt,
            references: e.claims.map((c) => c.providerReference).join(" "),
            note: e.status === "DUPLICATE" ? `duplicate of ${e.duplicateOfId}` : (e.lastError ?? ""),
          })),
        ),
      );
      const total = await prisma.rawEvent.count({ where: { tenantId: tenant.id } });
      console.log(`\n${events.length} shown of ${total}.`);
    },
  },
];

eventCommands.push({
  name: "events reprocess",
  summary:
    "Send a FAILED/IGNORED event (or a stuck claim) back through the normal path: --id N, or --status FAILED for all",
  options: flags({ tenant: "string", id: "string", status: "string", reason: "string" }),
  required: ["tenant", "reason"],
  database: true,
  async run(a) {
    const tenant = await requireTenant(a.tenant);
    const actor = cliActor();
    const stale = config().TALLY_STALE_CLAIM_MS;
    if (a.id !== undefined && a.status !== undefined) throw new UsageError("Give --id or --status, not both");
    if (a.id !== undefined) {
      if (!/^\d+$/.test(String(a.id))) throw new UsageError(`--id must be an event number, got "${a.id}"`);
      const r = orFail(await reprocessEvent(tenant.id, BigInt(String(a.id)), actor, String(a.reason), stale));
      console.log(
        r.action === "reparse"
          ? `Event ${r.rawEventId} queued to be parsed again.`
          : `Event ${r.rawEventId}: ${r.claims} claim(s) released for a worker to retry.`,
      );
      return;
    }
    if (String(a.status).toUpperCase() !== "FAILED") throw new UsageError("Give --id <event> or --status FAILED");
    const { requeued, skipped } = await reprocessFailed(tenant.id, actor, String(a.reason), stale);
    console.log(`${requeued.length} FAILED event(s) requeued.`);
    for (const s of skipped) console.log(`  skipped ${s.id}: ${s.message}`);
  },
});
