// events commands: what arrived, and in what state.
import { prisma } from "@/lib/db";
import { listEvents, RAW_EVENT_STATUSES } from "@/lib/events";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";
import { printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

export const eventCommands: Command[] = [
  {
    name: "events list",
    summary: "List a tenant's newest raw events",
    options: { tenant: { type: "string" }, status: { type: "string" }, reference: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" } },
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const status = a.status === undefined ? undefined : String(a.status).toUpperCase();
      if (status && !RAW_EVENT_STATUSES.includes(status as RawEventStatus)) throw new UsageError(`--status must be one of ${RAW_EVENT_STATUSES.join(", ")}`);
      const limit = a.limit === undefined ? 50 : Number(a.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number`);
      const events = await listEvents({ tenantId: tenant.id, status: status as RawEventStatus | undefined, reference: a.reference as string | undefined, limit });
      if (a.json) return printJson(events);
      console.log(table(events.map((e) => ({
        id: e.id,
        provider: e.provider,
        source: e.source,
        status: e.status,
        received: e.receivedAt,
        references: e.claims.map((c) => c.providerReference).join(" "),
        note: e.status === "DUPLICATE" ? `duplicate of ${e.duplicateOfId}` : (e.lastError ?? ""),
      }))));
      const total = await prisma.rawEvent.count({ where: { tenantId: tenant.id } });
      console.log(`\n${events.length} shown of ${total}.`);
    },
  },
];
