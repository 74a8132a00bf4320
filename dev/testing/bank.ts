// Bank-step fixtures for tests: a payout row as the worker or a settlement run writes
// it, and a camt.053 statement of a few entries imported through the real import.
import { Readable } from "node:stream";
import type { Actor } from "@/lib/admin/audit";
import { importBankStatement, type ImportSummary } from "@/lib/bank/import";
import { aCamt053, type EntrySpec } from "@/lib/bank/statement-builders";
import type { Provider } from "@/lib/generated/prisma/enums";
import { prisma } from "@/lib/platform/db";
import { unique } from "@/dev/testing/builders";

export const ACCOUNTANT: Actor = { type: "USER", id: undefined, label: "accountant@bank.test" };
export const day = (d: string) => new Date(`${d}T00:00:00Z`);

export async function aPayout(
  tenantId: string,
  o: { amount: bigint; arrival: string; provider?: Provider; reference?: string; currency?: string; theirs?: bigint },
) {
  return prisma.payout.create({
    data: {
      tenantId,
      provider: o.provider ?? "stripe",
      reference: o.reference ?? unique("po_"),
      currency: o.currency ?? "EUR",
      ourAmount: o.amount,
      theirAmount: o.theirs ?? null,
      arrivalDate: day(o.arrival),
    },
  });
}

/** Imports a camt.053 statement of these entries covering [from, to]. */
export async function importStatement(
  tenantId: string,
  entries: EntrySpec[],
  o: { from: string; to: string; actor?: Actor; name?: string },
): Promise<ImportSummary> {
  const r = await importBankStatement({
    tenantId,
    source: { stream: Readable.from([Buffer.from(aCamt053({ entries, from: o.from, to: o.to }))]) },
    format: "camt053",
    sourceName: o.name ?? `${unique("statement-")}.xml`,
    actor: o.actor ?? ACCOUNTANT,
  });
  if (!r.ok) throw new Error(r.message);
  return r.value;
}
