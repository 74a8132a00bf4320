// Four eyes on settlement postings from an uploaded report (#20). A run posts, from the
// settlement alone, what no webhook brings (fees, disputes, adjustments, Adyen's and
// Paystack's payouts). When the settlement came from the provider's API with the
// tenant's key, that is the provider speaking. When it is a file someone sent over HTTP
// (the dashboard's upload, or the same route with an API token), it is one person's word:
// a stolen session or a careless edit would mint fee and payout postings nobody checked.
//
// The design, the smallest we found sound:
//   - The run builds the raw event bodies exactly as it would post them and holds them
//     (recon_held_movements), with their count and total per kind and currency, in one
//     recon_settlement_approvals row per run (status PENDING, who started it). Its
//     theirs-not-ours discrepancies are IN_FLIGHT, so the run does not fetch them either.
//   - A second person (accountant or admin, signed in, not the run's starter) approves:
//     one transaction locks the row, stores the held bodies as SETTLEMENT raw events
//     (skipping references claimed meanwhile), marks the discrepancies FETCHED, counts
//     the run's fees posted and writes the audit entry; the worker posts them as any
//     delivery. Or rejects: nothing is stored, the discrepancies are open again. Both need
//     a reason. A decided row never changes, so a second approval is a 409, never a
//     second set of raw events (and the claims would make a second set duplicates anyway).
//   - The database holds the rules too: CHECK decided_by <> started_by, a trigger that
//     refuses changing a decided row or rewriting what was held.
// Not a case proposal (lib/cases): a run's postings are not about one discrepancy, span
// currencies, and the proposer is the run's starter by construction; a case kind for them
// would run through every case list, SLA and export. The four-eyes rule, the refusal
// reasons (own_proposal 403, already_decided 409), the audit log and the route wrapper
// are the cases' own.
//
// Trusted, posted at once as before: a run against the provider's API, and a file run by
// the CLI or the system (tests, the benchmark). The CLI runs on the host with the
// database's credentials: whoever can run it can write postings with psql, so a second
// approval there would be ceremony, and it would stop the operator's scripted imports.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import type { Person } from "@/lib/cases/cases";
import type { Role } from "@/lib/generated/prisma/enums";
import { Prisma, prisma } from "@/lib/platform/db";
import type { DomainResult } from "@/lib/platform/refusal";
import { RAW_EVENTS_CHANNEL, wake } from "@/lib/pipeline/wake";

/** Who may decide a run's held settlement movements (never the person who started the run). */
export const SETTLEMENT_DECIDERS: readonly Role[] = ["accountant", "admin"];

export type HeldTotal = { kind: string; currency: string; count: number; amount: string };

export type HeldSettlement = { fees: number; others: number; totals: HeldTotal[] };

export const HELD_NOTE = (runId: bigint) =>
  `held: run ${runId}'s report was uploaded, so what it posts from the settlement awaits a second person's approval`;

/** A report sent over HTTP, by a person's session or an API token: its settlement movements wait for four eyes. */
export function holdsSettlementMovements(input: { source: { kind: string }; actor: Actor }): boolean {
  return input.source.kind !== "api" && (input.actor.type === "USER" || input.actor.type === "API_TOKEN");
}

export type SettlementApproval = {
  runId: bigint;
  status: "PENDING" | "APPROVED" | "REJECTED";
  startedById: string | null;
  startedByLabel: string;
  heldAt: Date;
  fees: number;
  others: number;
  totals: HeldTotal[];
  decidedByLabel: string | null;
  decidedAt: Date | null;
  reason: string | null;
  posted: number | null;
};

/** The run's held settlement movements and their decision; null for a run that held none. */
export async function settlementApprovalOf(tenantId: string, runId: bigint): Promise<SettlementApproval | null> {
  const a = await prisma.reconSettlementApproval.findFirst({ where: { tenantId, runId } });
  if (!a) return null;
  return {
    runId: a.runId,
    status: a.status as SettlementApproval["status"],
    startedById: a.startedById,
    startedByLabel: a.startedByLabel,
    heldAt: a.heldAt,
    fees: a.fees,
    others: a.others,
    totals: a.totals as HeldTotal[],
    decidedByLabel: a.decidedByLabel,
    decidedAt: a.decidedAt,
    reason: a.reason,
    posted: a.posted,
  };
}

export type SettlementDecision = { decision: "approve" | "reject"; reason: string };

export type SettlementDecided =
  | { outcome: "approved"; runId: bigint; posted: number; alreadyClaimed: number }
  | { outcome: "rejected"; runId: bigint };

export async function decideSettlementMovements(
  tenantId: string,
  runId: bigint,
  checker: Person,
  input: SettlementDecision,
): Promise<DomainResult<SettlementDecided>> {
  const reason = input.reason.trim();
  if (reason.length < 3)
    return {
      ok: false,
      reason: "reason_required",
      message: `Say why you ${input.decision} run ${runId}'s settlement movements (at least 3 characters)`,
    };
  const decided = await prisma.$transaction(async (tx): Promise<DomainResult<SettlementDecided>> => {
    // The approval row is the lock: two checkers deciding at once take turns, and the second finds it decided.
    const [a] = await tx.$queryRaw<
      {
        status: string;
        started_by_id: string | null;
        started_by_label: string;
        decided_by_label: string | null;
        decided_at: Date | null;
        fees: number;
        others: number;
        totals: HeldTotal[];
        provider: string;
      }[]
    >(Prisma.sql`
      SELECT a.status::text, a.started_by_id::text, a.started_by_label, a.decided_by_label, a.decided_at, a.fees, a.others, a.totals, r.provider::text
      FROM recon_settlement_approvals a JOIN recon_runs r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
      WHERE a.run_id = ${runId} AND r.tenant_id = ${tenantId}::uuid
      FOR UPDATE OF a`);
    if (!a) {
      const run = await tx.reconRun.findFirst({ where: { id: runId, tenantId }, select: { source: true } });
      if (!run) return { ok: false, reason: "not_found", message: `No reconciliation run ${runId} in this tenant` };
      return {
        ok: false,
        reason: "nothing_to_do",
        message: `Run ${runId} holds no settlement movements: its report came from the provider's API or the CLI, or it had none to post`,
      };
    }
    if (a.status !== "PENDING")
      return {
        ok: false,
        reason: "already_decided",
        message: `Run ${runId}'s settlement movements were already ${a.status.toLowerCase()} by ${a.decided_by_label} at ${a.decided_at?.toISOString()}`,
      };
    if (a.started_by_id === checker.userId)
      return {
        ok: false,
        reason: "own_proposal",
        message: `Four eyes: you started run ${runId} from your upload, so a different accountant or admin must approve or reject what it posts`,
      };
    const actor = { type: "USER" as const, id: checker.userId, label: checker.label };
    const details = {
      provider: a.provider,
      fees: a.fees,
      others: a.others,
      totals: a.totals,
      startedBy: a.started_by_label,
    };

    if (input.decision === "reject") {
      await tx.$executeRaw(Prisma.sql`
        UPDATE recon_settlement_approvals SET status = 'REJECTED', decided_by_id = ${checker.userId}::uuid,
          decided_by_label = ${checker.label}, decided_at = now(), reason = ${reason}
        WHERE tenant_id = ${tenantId}::uuid AND run_id = ${runId}`);
      // Open again: a later run (or the provider's API) may bring them; nothing of this file is posted.
      await tx.$executeRaw(Prisma.sql`
        UPDATE recon_discrepancies d SET state = 'OPEN', note = ${`rejected from run ${runId} by ${checker.label}: ${reason}`}
        FROM recon_held_movements h JOIN recon_runs r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
        WHERE h.tenant_id = ${tenantId}::uuid AND h.run_id = ${runId} AND h.marks_discrepancy AND d.tenant_id = r.tenant_id AND d.provider = r.provider
          AND d.reference = h.reference AND d.bucket = 'THEIRS_NOT_OURS' AND d.state = 'IN_FLIGHT'`);
      await recordAudit(tx, {
        actor,
        action: "recon.settlement_reject",
        subjectType: "recon_run",
        subjectId: String(runId),
        tenantId,
        reason,
        details,
      });
      return { ok: true, value: { outcome: "rejected", runId } };
    }

    // As the run would have stored them: references claimed since (a webhook came, another
    // run posted them) are skipped; each stored event is found back by its body's hash.
    const [stored] = await tx.$queryRaw<{ posted: number; fees: number; held: number }[]>(Prisma.sql`
      WITH held AS (
        SELECT h.reference, h.kind, h.body, h.marks_discrepancy, sha256(h.body) AS sha, r.tenant_id, r.provider
        FROM recon_held_movements h JOIN recon_runs r ON r.tenant_id = h.tenant_id AND r.id = h.run_id WHERE h.tenant_id = ${tenantId}::uuid AND h.run_id = ${runId}),
      todo AS (
        SELECT * FROM held WHERE NOT EXISTS (
          SELECT 1 FROM processed_events pe WHERE pe.idempotency_key = held.tenant_id::text || ':' || held.provider::text || ':' || held.reference)),
      stored AS (
        INSERT INTO raw_events (tenant_id, provider, source, raw_body, body_sha256, headers)
        SELECT tenant_id, provider, 'SETTLEMENT', body, sha,
               jsonb_build_object('content-type', 'application/json', 'x-tally-settlement-run', ${String(runId)}::text,
                                  'x-tally-approved-by', ${checker.label}::text)
        FROM todo RETURNING id, body_sha256),
      marked AS (
        UPDATE recon_discrepancies d SET state = 'FETCHED', raw_event_id = s.id,
          note = ${`posted from the settlement by run ${runId}, approved by ${checker.label}`}
        FROM stored s JOIN todo t ON t.sha = s.body_sha256
        WHERE t.marks_discrepancy AND d.tenant_id = t.tenant_id AND d.provider = t.provider AND d.reference = t.reference
          AND d.bucket = 'THEIRS_NOT_OURS' AND d.state IN ('OPEN', 'FETCH_FAILED', 'IN_FLIGHT'))
      SELECT (SELECT count(*) FROM todo)::int AS posted, (SELECT count(*) FROM todo WHERE kind = 'FEE')::int AS fees,
             (SELECT count(*) FROM held)::int AS held`);
    await tx.$executeRaw(Prisma.sql`
      UPDATE recon_settlement_approvals SET status = 'APPROVED', decided_by_id = ${checker.userId}::uuid,
        decided_by_label = ${checker.label}, decided_at = now(), reason = ${reason}, posted = ${stored!.posted}
      WHERE tenant_id = ${tenantId}::uuid AND run_id = ${runId}`);
    await tx.reconRun.update({ where: { id: runId }, data: { feesPosted: stored!.fees } });
    const alreadyClaimed = stored!.held - stored!.posted;
    await recordAudit(tx, {
      actor,
      action: "recon.settlement_approve",
      subjectType: "recon_run",
      subjectId: String(runId),
      tenantId,
      reason,
      details: { ...details, posted: stored!.posted, alreadyClaimed },
    });
    return { ok: true, value: { outcome: "approved", runId, posted: stored!.posted, alreadyClaimed } };
  });
  if (decided.ok && decided.value.outcome === "approved" && decided.value.posted > 0) wake(RAW_EVENTS_CHANNEL);
  return decided;
}
