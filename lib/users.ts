// People who sign in to the dashboard: a role, the tenants they may see
// (admins see all), and an Argon2id password hash.
import { recordAudit, type Actor } from "@/lib/audit";
import { generatePassword, hashPassword, passwordProblem } from "@/lib/auth/passwords";
import { prisma } from "@/lib/db";
import type { Role } from "@/lib/generated/prisma/enums";
import type { DomainResult } from "@/lib/tenants";

const ROLES: readonly Role[] = ["ops", "accountant", "admin"];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type NewUser = { email: string; role: string; tenants: string[]; password?: string; name?: string };

/** Creates a user; when no password is given one is generated and returned, once. */
export async function createUser(input: NewUser, actor: Actor): Promise<DomainResult<{ id: string; email: string; password: string }>> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) return { ok: false, reason: "invalid_email", message: `"${input.email}" is not an email address` };
  if (!ROLES.includes(input.role as Role)) return { ok: false, reason: "invalid_role", message: `Role must be one of ${ROLES.join(", ")}` };
  if (input.role !== "admin" && input.tenants.length === 0) return { ok: false, reason: "no_tenant", message: `A ${input.role} user must belong to at least one tenant (--tenant)` };
  const password = input.password ?? generatePassword();
  const problem = input.password === undefined ? null : passwordProblem(password);
  if (problem) return { ok: false, reason: "weak_password", message: problem };
  const tenants = await prisma.tenant.findMany({ where: { slug: { in: input.tenants } } });
  const missing = input.tenants.filter((s) => !tenants.some((t) => t.slug === s));
  if (missing.length) return { ok: false, reason: "unknown_tenant", message: `Unknown tenant${missing.length > 1 ? "s" : ""} ${missing.map((s) => `"${s}"`).join(", ")}` };
  if (await prisma.user.findUnique({ where: { email } })) return { ok: false, reason: "exists", message: `A user with email ${email} already exists` };
  const passwordHash = await hashPassword(password);
  const user = await prisma.$transaction(async (tx) => {
    const u = await tx.user.create({
      data: { email, name: input.name ?? null, role: input.role as Role, passwordHash, tenants: { create: tenants.map((t) => ({ tenantId: t.id })) } },
    });
    for (const t of tenants.length ? tenants : [null]) {
      await recordAudit(tx, { actor, action: "user.create", subjectType: "user", subjectId: u.id, tenantId: t?.id ?? null, details: { email, role: input.role, tenants: input.tenants } });
    }
    return u;
  });
  return { ok: true, value: { id: user.id, email, password } };
}
