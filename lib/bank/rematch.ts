// Bank matching without an import. A statement is matched when it is imported, but the
// payouts it should be matched with may come later: a payout's webhook delayed, or its
// row written by the next settlement run. Such a payout used to wait for the next
// import to be matched with a credit already on file, and one whose window the
// statements already covered stayed unflagged until then (and the credit's "no payout
// explains it" case stayed open). Every scheduler tick the worker matches again, for
// each tenant with statements, when a payout in transit changed after the tenant's
// mark (tenants.bank_matched_through, set by every matching, lib/bank/match.ts).
//
// A re-match is the same matching as an import's, minus what only new bank evidence
// justifies: it re-checks no "timing" case (nothing new came from the bank, so it
// would reopen what a person just parked). A re-match that finds nothing (no credit
// matched, no case opened or closed) is rolled back to leave no run behind, keeping
// only the new mark: the mark trails by a margin (REMATCH_MARGIN_SECONDS), so the
// ticks after a change find it again, and those are not worth a run each.
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { lockBankMatching, type MatchSummary, markMatched, matchPayouts } from "@/lib/bank/match";
import { pool } from "@/lib/platform/db";

export type RematchOutcome = { tenantId: string; summary: MatchSummary | null; error?: string };

/** Did the matching change anything a person would see? */
const changedAnything = (s: MatchSummary) =>
  s.matchedPayouts > 0 || s.casesOpened > 0 || s.casesClosed > 0 || s.casesReopened > 0;

/** Matches again for one tenant, in its own transaction. Null summary: nothing changed, nothing recorded. */
export async function rematchTenant(tenantId: string): Promise<MatchSummary | null> {
  const client = await pool().connect();
  try {
    await client.query("BEGIN");
    // Taken outside the savepoint: a lock taken inside it would go with a rollback to it.
    await lockBankMatching(client, tenantId);
    await client.query("SAVEPOINT rematch");
    const summary = await matchPayouts(client, {
      tenantId,
      statement: null,
      actor: SYSTEM_ACTOR,
      startedAt: new Date(),
      linesAdded: 0,
    });
    const kept = changedAnything(summary);
    if (!kept) {
      await client.query("ROLLBACK TO SAVEPOINT rematch");
      await markMatched(client, tenantId);
    }
    await client.query("COMMIT");
    return kept ? summary : null;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Tenants with a bank statement and a payout in transit that changed after their last matching. */
export async function tenantsDueForRematch(): Promise<string[]> {
  const { rows } = await pool().query<{ id: string }>(
    `SELECT t.id FROM tenants t
     WHERE EXISTS (SELECT 1 FROM bank_statements s WHERE s.tenant_id = t.id)
       AND EXISTS (SELECT 1 FROM payouts p WHERE p.tenant_id = t.id AND p.status = 'IN_TRANSIT'
                   AND p.updated_at >= coalesce(t.bank_matched_through, '-infinity'))
     ORDER BY t.id`,
  );
  return rows.map((r) => r.id);
}

/** The scheduler's step: every due tenant matched again; one tenant's failure does not stop the others. */
export async function runDueBankRematches(): Promise<RematchOutcome[]> {
  const outcomes: RematchOutcome[] = [];
  for (const tenantId of await tenantsDueForRematch()) {
    try {
      outcomes.push({ tenantId, summary: await rematchTenant(tenantId) });
    } catch (error) {
      outcomes.push({ tenantId, summary: null, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return outcomes;
}
