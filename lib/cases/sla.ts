// The SLA per case kind as the database applies it. The BEFORE INSERT trigger on
// cases (migration 20261207010000_case_links) sets due_at = opened_at + the
// kind's days from case_sla, whoever inserts the case; this module writes that
// table from TALLY_CASE_SLA_DAYS when the database is prepared (migrations,
// npm start), and reads it back for the pages. A change applies to cases opened
// after it: a due date, once given, is not moved.
import { config } from "@/lib/platform/config";
import { Prisma, prisma, type Tx } from "@/lib/platform/db";
import { CASE_KINDS, type CaseSlaDays } from "@/lib/cases/sla-days";
import type { CaseKindCode } from "@/lib/cases/labels";

/** Writes the configured days into case_sla; returns the kinds whose days changed. */
export async function syncCaseSla(db: Tx = prisma, days: CaseSlaDays = config().TALLY_CASE_SLA_DAYS) {
  const rows = CASE_KINDS.map((kind) => Prisma.sql`(${kind}::"CaseKind", ${days[kind]}::int)`);
  const changed = await db.$queryRaw<{ kind: CaseKindCode }[]>(Prisma.sql`
    INSERT INTO case_sla (kind, days) VALUES ${Prisma.join(rows)}
    ON CONFLICT (kind) DO UPDATE SET days = EXCLUDED.days, updated_at = now() WHERE case_sla.days <> EXCLUDED.days
    RETURNING kind::text AS kind`);
  return changed.map((r) => r.kind);
}

/** The days in force, per kind, as the trigger reads them. */
export async function caseSla(db: Tx = prisma): Promise<CaseSlaDays> {
  const rows = await db.caseSla.findMany();
  return Object.fromEntries(rows.map((r) => [r.kind, r.days])) as CaseSlaDays;
}
