// What a run does when it no longer finds a discrepancy that had a case: the case is
// resolved with the run's words, a proposal still waiting for approval is superseded
// (nothing is left to decide), and each close is audited as the system's. Shared by
// the settlement comparison (lib/recon/run.ts), the payout statements
// (lib/recon/payouts.ts) and the bank matching (lib/bank/match.ts), inside the run's
// transaction.
import type { PoolClient } from "pg";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";

export async function closeCasesOfResolved(
  client: PoolClient,
  tenantId: string,
  discrepancyIds: string[],
  runId: bigint,
  words: { resolution: string; reason: string },
): Promise<{ id: string; discrepancy_id: string }[]> {
  if (discrepancyIds.length === 0) return [];
  const closed = await client.query<{ id: string; discrepancy_id: string }>(
    `UPDATE cases SET status = 'RESOLVED', closed_at = now(), waiting_since = NULL, resolution = $2
     WHERE discrepancy_id = ANY($1::bigint[]) AND status <> 'RESOLVED' RETURNING id::text, discrepancy_id::text`,
    [discrepancyIds, words.resolution],
  );
  const ids = closed.rows.map((c) => c.id);
  if (ids.length === 0) return [];
  await client.query(
    `UPDATE case_proposals SET status = 'SUPERSEDED', decided_at = now() WHERE case_id = ANY($1::bigint[]) AND status = 'PENDING'`,
    [ids],
  );
  await client.query(
    `INSERT INTO audit_log (actor_type, actor_label, tenant_id, action, subject_type, subject_id, reason, details)
     SELECT 'SYSTEM', $1, $2, 'case.close', 'case', c.id, $3, jsonb_build_object('discrepancyId', c.discrepancy_id, 'runId', $4::text)
     FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS c(id, discrepancy_id, n) ORDER BY n`,
    [SYSTEM_ACTOR.label, tenantId, words.reason, String(runId), ids, closed.rows.map((c) => c.discrepancy_id)],
  );
  return closed.rows;
}
