// alert-channel and alerts commands: where a tenant's alerts go, a test send to
// check a channel, and the alerts open now. Changes are audited as the OS user.
import { cliActor } from "@/lib/admin/audit";
import { addChannel, CHANNEL_KINDS, listChannels, removeChannel, setChannelEnabled } from "@/lib/alerts/channels";
import { tryChannel } from "@/lib/alerts/try-channel";
import type { AlertChannelKind } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";
import { flags, orFail, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

const toggle = (enabled: boolean): Command => ({
  name: `alert-channel ${enabled ? "enable" : "disable"}`,
  summary: `${enabled ? "Enable" : "Disable"} an alert channel (by name or id), audited with --reason`,
  options: flags({ tenant: "string", channel: "string", reason: "string" }),
  required: ["tenant", "channel", "reason"],
  database: true,
  async run(a) {
    const tenant = await requireTenant(a.tenant);
    orFail(await setChannelEnabled(tenant.id, String(a.channel), enabled, cliActor(), String(a.reason)));
    console.log(`Channel "${a.channel}" ${enabled ? "enabled" : "disabled"}.`);
  },
});

export const alertCommands: Command[] = [
  {
    name: "alert-channel add",
    summary:
      "Add an alert channel: --kind email --target 'a@x, b@y', or webhook|slack --target <url> (stored encrypted)",
    options: flags({ tenant: "string", kind: "string", name: "string", target: "string" }),
    required: ["tenant", "kind", "name", "target"],
    database: true,
    async run(a) {
      const kind = String(a.kind).toUpperCase() as AlertChannelKind;
      if (!CHANNEL_KINDS.includes(kind))
        throw new UsageError(`--kind must be one of ${CHANNEL_KINDS.map((k) => k.toLowerCase()).join(", ")}`);
      const tenant = await requireTenant(a.tenant);
      const c = orFail(
        await addChannel(tenant.id, { kind, name: String(a.name), target: String(a.target) }, cliActor()),
      );
      console.log(`Channel "${c.name}" (${c.kind.toLowerCase()}, ${c.target}) added: ${c.id}.`);
    },
  },
  {
    name: "alert-channel list",
    summary: "List a tenant's alert channels (URLs shown as their origin only)",
    options: flags({ tenant: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const channels = await listChannels(tenant.id);
      if (a.json) return printJson(channels);
      console.log(
        table(channels.map((c) => ({ id: c.id, name: c.name, kind: c.kind, target: c.target, enabled: c.enabled }))),
      );
    },
  },
  {
    name: "alert-channel test",
    summary: "Send a test notification to a channel now and print the receiver's answer",
    options: flags({ tenant: "string", channel: "string" }),
    required: ["tenant", "channel"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const r = orFail(await tryChannel(tenant, String(a.channel), cliActor()));
      console.log(`Test notification delivered to "${r.channel}" (idempotency key ${r.idempotencyKey}).`);
    },
  },
  toggle(false),
  toggle(true),
  {
    name: "alert-channel remove",
    summary: "Remove an alert channel and whatever it still had queued, audited with --reason",
    options: flags({ tenant: "string", channel: "string", reason: "string" }),
    required: ["tenant", "channel", "reason"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      orFail(await removeChannel(tenant.id, String(a.channel), cliActor(), String(a.reason)));
      console.log(`Channel "${a.channel}" removed.`);
    },
  },
  {
    name: "alerts list",
    summary: "The tenant's alerts: open ones first, then the last cleared",
    options: flags({ tenant: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const states = await prisma.alertState.findMany({
        where: { tenantId: tenant.id },
        orderBy: [{ clearedAt: { sort: "desc", nulls: "first" } }, { openedAt: "desc" }],
        take: 50,
      });
      if (a.json) return printJson(states);
      console.log(
        table(
          states.map((s) => ({
            rule: s.rule,
            subject: s.subject,
            state: s.clearedAt ? "cleared" : "open",
            opened: s.openedAt,
            cleared: s.clearedAt,
            link: s.link,
          })),
        ),
      );
    },
  },
];
