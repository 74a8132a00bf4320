// Turning findings into notifications, once. Each (tenant, rule, subject) has one
// row in alert_states; a finding opens it, its absence (for a rule that was
// judged) clears it, and only the evaluator whose statement changed the row
// queues the notifications, in the same transaction. So one notification goes out
// when an alert opens, one when it clears, none while it stays open, however many
// worker replicas evaluate at once: the row's lock orders them, and the second
// re-reads the first's committed row (READ COMMITTED re-checks ON CONFLICT … WHERE
// and UPDATE … WHERE against the newest version) and finds nothing to change.
import { evaluateRules, type Evaluation, type Finding } from "@/lib/alerts/rules";
import type { AlertMessage } from "@/lib/alerts/deliver";
import { Prisma, prisma, type Tx } from "@/lib/platform/db";
import { OUTBOX_CHANNEL, wake } from "@/lib/pipeline/wake";

export type Transitions = { opened: Finding[]; resolved: { rule: string; subject: string }[] };

async function queue(
  tx: Tx,
  tenantId: string,
  s: { rule: string; subject: string; episode: number },
  transition: "OPENED" | "RESOLVED",
  message: AlertMessage,
): Promise<void> {
  // One row per enabled channel; the unique key (channel, state, episode,
  // transition) makes a repeat of this statement a no-op, a second guard behind the state row.
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO alert_notifications (tenant_id, channel_id, rule, subject, episode, transition, payload)
    SELECT tenant_id, id, ${s.rule}, ${s.subject}, ${s.episode}, ${transition}::"AlertTransition", ${JSON.stringify(message)}::jsonb
    FROM alert_channels WHERE tenant_id = ${tenantId}::uuid AND enabled
    ON CONFLICT DO NOTHING`);
}

/** Opens what is found and not open, clears what is open and no longer found. */
export async function applyEvaluation(tenant: { id: string; slug: string }, e: Evaluation): Promise<Transitions> {
  const result: Transitions = { opened: [], resolved: [] };
  for (const f of e.findings) {
    const opened = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ episode: number; opened_at: Date }[]>(Prisma.sql`
        INSERT INTO alert_states (tenant_id, rule, subject, message, link)
        VALUES (${tenant.id}::uuid, ${f.rule}, ${f.subject}, ${f.message}, ${f.link})
        ON CONFLICT (tenant_id, rule, subject) DO UPDATE
          SET episode = alert_states.episode + 1, message = EXCLUDED.message, link = EXCLUDED.link,
              opened_at = now(), checked_at = now(), cleared_at = NULL
          WHERE alert_states.cleared_at IS NOT NULL
        RETURNING episode, opened_at`);
      const row = rows[0];
      if (!row) {
        // Open already: no notification; the message follows the figures for the dashboard.
        await tx.$executeRaw(Prisma.sql`
          UPDATE alert_states SET message = ${f.message}, link = ${f.link}, checked_at = now()
          WHERE tenant_id = ${tenant.id}::uuid AND rule = ${f.rule} AND subject = ${f.subject} AND cleared_at IS NULL`);
        return false;
      }
      await queue(tx, tenant.id, { ...f, episode: row.episode }, "OPENED", {
        tenant: tenant.slug,
        rule: f.rule,
        subject: f.subject,
        status: "opened",
        title: f.title,
        message: f.message,
        link: f.link,
        openedAt: row.opened_at.toISOString(),
      });
      return true;
    });
    if (opened) result.opened.push(f);
  }

  const found = new Set(e.findings.map((f) => `${f.rule}\u0000${f.subject}`));
  const open = await prisma.alertState.findMany({
    where: { tenantId: tenant.id, clearedAt: null, rule: { in: e.evaluated } },
    select: { rule: true, subject: true },
  });
  for (const s of open.filter((s) => !found.has(`${s.rule}\u0000${s.subject}`))) {
    const resolved = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        { episode: number; opened_at: Date; cleared_at: Date; message: string; link: string }[]
      >(
        Prisma.sql`
        UPDATE alert_states SET cleared_at = now(), checked_at = now()
        WHERE tenant_id = ${tenant.id}::uuid AND rule = ${s.rule} AND subject = ${s.subject} AND cleared_at IS NULL
        RETURNING episode, opened_at, cleared_at, message, link`,
      );
      const row = rows[0];
      if (!row) return false;
      await queue(tx, tenant.id, { ...s, episode: row.episode }, "RESOLVED", {
        tenant: tenant.slug,
        rule: s.rule,
        subject: s.subject,
        status: "resolved",
        title: `${s.rule.replaceAll("_", " ")}${s.subject === "all" ? "" : ` (${s.subject})`} is back to normal`,
        message: `No longer the case: ${row.message}`,
        link: row.link,
        openedAt: row.opened_at.toISOString(),
        resolvedAt: row.cleared_at.toISOString(),
      });
      return true;
    });
    if (resolved) result.resolved.push(s);
  }
  if (result.opened.length || result.resolved.length) wake(OUTBOX_CHANNEL);
  return result;
}

/** One pass over every tenant that has an alert channel. */
export async function evaluateAlerts(now = new Date()): Promise<(Transitions & { tenant: string })[]> {
  const tenants = await prisma.tenant.findMany({
    where: { alertChannels: { some: { enabled: true } } },
    select: { id: true, slug: true },
  });
  const out: (Transitions & { tenant: string })[] = [];
  for (const t of tenants) out.push({ tenant: t.slug, ...(await applyEvaluation(t, await evaluateRules(t, now))) });
  return out;
}
