// Who can work a tenant's cases: its members who are accountants or admins, not
// disabled. The assignee picker lists them; lib/cases/assign.ts accepts only them.
import { prisma, type Tx } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";

export const ASSIGNABLE_ROLES: readonly Role[] = ["accountant", "admin"];

export async function assignablePeople(tenantId: string, db: Tx = prisma) {
  return db.user.findMany({
    where: { role: { in: [...ASSIGNABLE_ROLES] }, disabledAt: null, tenants: { some: { tenantId } } },
    select: { id: true, email: true, name: true, role: true },
    orderBy: { email: "asc" },
  });
}
