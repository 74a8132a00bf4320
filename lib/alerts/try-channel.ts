// "Send a test": one notification to one channel, now, in the request, so the
// person configuring it sees the receiver's own answer (a 404, a refused
// recipient, a timeout) rather than a row that goes dead hours later. Audited.
import { randomUUID } from "node:crypto";
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { openChannel } from "@/lib/alerts/channels";
import { deliver } from "@/lib/alerts/deliver";
import { dashboardLink } from "@/lib/alerts/rules";
import { prisma } from "@/lib/platform/db";
import { refuse, type DomainResult } from "@/lib/platform/refusal";

export async function tryChannel(
  tenant: { id: string; slug: string },
  idOrName: string,
  actor: Actor,
): Promise<DomainResult<{ channel: string; idempotencyKey: string }>> {
  const channel = await openChannel(tenant.id, idOrName);
  if (!channel.ok) return channel;
  const idempotencyKey = `tally-alert-test-${randomUUID()}`;
  const now = new Date().toISOString();
  let failure: string | null = null;
  try {
    await deliver(channel.value, {
      idempotencyKey,
      message: {
        tenant: tenant.slug,
        rule: "test",
        subject: channel.value.name,
        status: "test",
        title: `test notification to "${channel.value.name}"`,
        message: `${actor.label} sent this to check the channel; alerts for ${tenant.slug} will arrive here like this.`,
        link: dashboardLink(tenant.slug, ""),
        openedAt: now,
      },
    });
  } catch (error) {
    failure = (error instanceof Error ? error.message : String(error)).slice(0, 500);
  }
  await prisma.$transaction((tx) =>
    recordAudit(tx, {
      actor,
      action: "alert_channel.test",
      subjectType: "alert_channel",
      subjectId: channel.value.id,
      tenantId: tenant.id,
      details: { name: channel.value.name, idempotencyKey, delivered: failure === null, error: failure },
    }),
  );
  if (failure) return refuse("delivery_failed", `The test notification to "${channel.value.name}" failed: ${failure}`);
  return { ok: true, value: { channel: channel.value.name, idempotencyKey } };
}
