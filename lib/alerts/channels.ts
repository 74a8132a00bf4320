// A tenant's alert channels: where its alerts go. Email (to addresses, through
// TALLY_ALERT_SMTP_URL), a generic JSON webhook, or a Slack incoming webhook. A
// webhook or Slack URL is the credential that lets anyone post there, so it is
// stored sealed like every secret at rest and shown to people only as its origin.
// Every change is audited in the transaction that makes it.
import net from "node:net";
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { trustedNetworks } from "@/lib/alerts/deliver";
import { refusedAddress } from "@/lib/platform/outbound";
import type { AlertChannelKind } from "@/lib/generated/prisma/enums";
import { Prisma, prisma } from "@/lib/platform/db";
import { refuse, type DomainResult } from "@/lib/platform/refusal";
import { open, seal } from "@/lib/platform/secrets-at-rest";

export const CHANNEL_KINDS = ["EMAIL", "WEBHOOK", "SLACK"] as const satisfies readonly AlertChannelKind[];

export type ChannelInput = { kind: AlertChannelKind; name: string; target: string };

/** What people see of a channel: never the URL's path or query, which carry its secret. */
export type ChannelView = {
  id: string;
  kind: AlertChannelKind;
  name: string;
  target: string;
  enabled: boolean;
  createdAt: Date;
};

/** A channel as the dispatcher uses it: the target opened. */
export type OpenChannel = { id: string; kind: AlertChannelKind; name: string; target: string };

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;

function checkTarget(kind: AlertChannelKind, target: string): DomainResult<string> {
  const t = target.trim();
  if (kind === "EMAIL") {
    const addresses = t
      .split(",")
      .map((a) => a.trim())
      .filter(Boolean);
    if (addresses.length === 0) return refuse("invalid_email", "Give at least one email address");
    const bad = addresses.find((a) => !EMAIL.test(a));
    if (bad) return refuse("invalid_email", `"${bad}" is not an email address`);
    return { ok: true, value: addresses.join(", ") };
  }
  let url: URL;
  try {
    url = new URL(t);
  } catch {
    return refuse("invalid_url", `"${t.slice(0, 100)}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return refuse("invalid_url", `The ${kind.toLowerCase()} URL must be http or https`);
  // Said at once where the URL shows it; a name is judged by what it resolves to at each delivery.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = net.isIP(host) ? host : /(^|\.)localhost$/i.test(host) ? "127.0.0.1" : null;
  const why = literal && refusedAddress(literal, trustedNetworks());
  if (why) return refuse("invalid_url", `The ${kind.toLowerCase()} URL's host ${host}: ${why}`);
  return { ok: true, value: url.href };
}

const shown = (kind: AlertChannelKind, stored: string) => {
  if (kind === "EMAIL") return stored;
  const url = new URL(open(stored));
  return `${url.origin}/…`;
};

export async function listChannels(tenantId: string): Promise<ChannelView[]> {
  const rows = await prisma.alertChannel.findMany({ where: { tenantId }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    name: r.name,
    target: shown(r.kind, r.target),
    enabled: r.enabled,
    createdAt: r.createdAt,
  }));
}

export async function addChannel(
  tenantId: string,
  input: ChannelInput,
  actor: Actor,
): Promise<DomainResult<ChannelView>> {
  const name = input.name.trim();
  if (!name || name.length > 100) return refuse("invalid_name", "A channel's name is 1 to 100 characters");
  const target = checkTarget(input.kind, input.target);
  if (!target.ok) return target;
  try {
    const row = await prisma.$transaction(async (tx) => {
      const row = await tx.alertChannel.create({
        data: {
          tenantId,
          kind: input.kind,
          name,
          target: input.kind === "EMAIL" ? target.value : seal(target.value),
        },
      });
      await recordAudit(tx, {
        actor,
        action: "alert_channel.add",
        subjectType: "alert_channel",
        subjectId: row.id,
        tenantId,
        details: { kind: row.kind, name, target: shown(row.kind, row.target) },
      });
      return row;
    });
    return {
      ok: true,
      value: {
        id: row.id,
        kind: row.kind,
        name: row.name,
        target: shown(row.kind, row.target),
        enabled: row.enabled,
        createdAt: row.createdAt,
      },
    };
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")
      return refuse("exists", `This tenant already has a channel named "${name}"`);
    throw error;
  }
}

/** Finds a channel of this tenant by id or by name (the CLI names channels). */
async function findChannel(tenantId: string, idOrName: string) {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
  return prisma.alertChannel.findFirst({
    where: { tenantId, ...(uuid ? { id: idOrName } : { name: idOrName }) },
  });
}

export async function openChannel(tenantId: string, idOrName: string): Promise<DomainResult<OpenChannel>> {
  const row = await findChannel(tenantId, idOrName);
  if (!row) return refuse("not_found", `No alert channel "${idOrName}" in this tenant`);
  return {
    ok: true,
    value: { id: row.id, kind: row.kind, name: row.name, target: row.kind === "EMAIL" ? row.target : open(row.target) },
  };
}

/** Turns a channel off or on; an off channel gets no new notifications (queued ones still go). */
export async function setChannelEnabled(
  tenantId: string,
  idOrName: string,
  enabled: boolean,
  actor: Actor,
  reason?: string,
): Promise<DomainResult<{ id: string; enabled: boolean }>> {
  const row = await findChannel(tenantId, idOrName);
  if (!row) return refuse("not_found", `No alert channel "${idOrName}" in this tenant`);
  if (row.enabled === enabled)
    return refuse("nothing_to_do", `Channel "${row.name}" is already ${enabled ? "enabled" : "disabled"}`);
  await prisma.$transaction(async (tx) => {
    await tx.alertChannel.update({ where: { id: row.id }, data: { enabled, updatedAt: new Date() } });
    await recordAudit(tx, {
      actor,
      action: enabled ? "alert_channel.enable" : "alert_channel.disable",
      subjectType: "alert_channel",
      subjectId: row.id,
      tenantId,
      reason: reason ?? null,
      details: { name: row.name, kind: row.kind },
    });
  });
  return { ok: true, value: { id: row.id, enabled } };
}

/** Removes a channel and whatever it still had queued. */
export async function removeChannel(
  tenantId: string,
  idOrName: string,
  actor: Actor,
  reason?: string,
): Promise<DomainResult<{ id: string }>> {
  const row = await findChannel(tenantId, idOrName);
  if (!row) return refuse("not_found", `No alert channel "${idOrName}" in this tenant`);
  await prisma.$transaction(async (tx) => {
    await tx.alertChannel.delete({ where: { id: row.id } });
    await recordAudit(tx, {
      actor,
      action: "alert_channel.remove",
      subjectType: "alert_channel",
      subjectId: row.id,
      tenantId,
      reason: reason ?? null,
      details: { name: row.name, kind: row.kind, target: shown(row.kind, row.target) },
    });
  });
  return { ok: true, value: { id: row.id } };
}
