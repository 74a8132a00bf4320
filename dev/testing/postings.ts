import { prisma } from "@/lib/platform/db";

/** Each posting of a tenant's references starting with `prefix`, in order: its kind, reference and legs by account code. */
export async function postingsByPrefix(tenantId: string, prefix: string) {
  const rows = await prisma.posting.findMany({
    where: { tenantId, providerReference: { startsWith: prefix } },
    select: {
      kind: true,
      providerReference: true,
      entries: { select: { amount: true, account: { select: { code: true } } } },
    },
    orderBy: { id: "asc" },
  });
  return rows.map((p) => ({
    kind: p.kind,
    reference: p.providerReference,
    legs: Object.fromEntries(p.entries.map((e) => [e.account.code, e.amount])),
  }));
}
