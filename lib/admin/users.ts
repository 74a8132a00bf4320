// People who sign in to the dashboard: a role, the tenants they may see
// (admins see all), and an Argon2id password hash.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { generatePassword, hashPassword, passwordProblem } from "@/lib/auth/passwords";
import { revokeUserSessions } from "@/lib/auth/sessions";
import { Prisma, prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";
import type { DomainResult } from "@/lib/platform/refusal";

const ROLES: readonly Role[] = ["ops", "accountant", "admin"];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type NewUser = { email: string; role: string; tenants: string[]; password?: string; name?: string };

/** Creates a user; when no password is given one is generated and returned, once. */
export async function createUser(
  input: NewUser,
  actor: Actor,
): Promise<DomainResult<{ id: string; email: string; password: string }>> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email))
    return { ok: false, reason: "invalid_email", message: `"${input.email}" is not an email address` };
  if (!ROLES.includes(input.role as Role))
    return { ok: false, reason: "invalid_role", message: `Role must be one of ${ROLES.join(", ")}` };
  if (input.role !== "admin" && input.tenants.length === 0)
    return {
      ok: false,
      reason: "no_tenant",
      message: `A ${input.role} user must belong to at least one tenant (--tenant)`,
    };
  const password = input.password ?? generatePassword();
  const problem = input.password === undefined ? null : passwordProblem(password);
  if (problem) return { ok: false, reason: "weak_password", message: problem };
  const tenants = await prisma.tenant.findMany({ where: { slug: { in: input.tenants } } });
  const missing = input.tenants.filter((s) => !tenants.some((t) => t.slug === s));
  if (missing.length)
    return {
      ok: false,
      reason: "unknown_tenant",
      message: `Unknown tenant${missing.length > 1 ? "s" : ""} ${missing.map((s) => `"${s}"`).join(", ")}`,
    };
  if (await prisma.user.findUnique({ where: { email } }))
    return { ok: false, reason: "exists", message: `A user with email ${email} already exists` };
  const passwordHash = await hashPassword(password);
  const user = await prisma.$transaction(async (tx) => {
    const u = await tx.user.create({
      data: {
        email,
        name: input.name ?? null,
        role: input.role as Role,
        passwordHash,
        tenants: { create: tenants.map((t) => ({ tenantId: t.id })) },
      },
    });
    // One entry per tenant, naming only that tenant: a tenant's audit readers must not
    // learn which other tenants exist (issue #17 item 10). The tenant-less entry (an admin) is admins' only.
    for (const t of tenants.length ? tenants : [null]) {
      await recordAudit(tx, {
        actor,
        action: "user.create",
        subjectType: "user",
        subjectId: u.id,
        tenantId: t?.id ?? null,
        details: { email, role: input.role, tenants: t ? [t.slug] : [] },
      });
    }
    return u;
  });
  return { ok: true, value: { id: user.id, email, password } };
}

export type UserRow = {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: Date;
  disabledAt: Date | null;
  tenants: string[];
  activeSessions: number;
};

export async function listUsers(): Promise<UserRow[]> {
  const users = await prisma.user.findMany({
    orderBy: { email: "asc" },
    include: {
      tenants: { include: { tenant: { select: { slug: true } } } },
      _count: { select: { sessions: { where: { revokedAt: null, expiresAt: { gt: new Date() } } } } },
    },
  });
  return users.map((u) => ({
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    createdAt: u.createdAt,
    disabledAt: u.disabledAt,
    tenants: u.tenants.map((m) => m.tenant.slug).sort(),
    activeSessions: u._count.sessions,
  }));
}

/** Thrown inside a transaction that would leave Tally with no active admin: rolls it back; callers refuse. */
export class LastAdminError extends Error {
  constructor() {
    super("This is the last active admin; make someone else admin first");
  }
}

/**
 * Someone must always be able to administer Tally from the dashboard, whoever demotes
 * or disables an admin (the admin screen, or single sign-on applying the provider's
 * groups). Every active admin's row is locked, so two admins demoting each other at
 * once are taken in turn: the second, under READ COMMITTED, sees the first's change
 * (the WHERE is checked again on the row's new version) and is refused. A count read
 * before the transaction let both through.
 */
async function refuseLosingLastAdmin(tx: Prisma.TransactionClient, userId: string): Promise<void> {
  const admins = await tx.$queryRaw<{ id: string }[]>(
    Prisma.sql`SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id FOR UPDATE`,
  );
  if (admins.length === 1 && admins[0]!.id === userId) throw new LastAdminError();
}

type UserAudit = (action: string, details: Record<string, unknown>) => Promise<unknown>;

/** Audits changes to one user in the transaction making them: who, why, and `base` (the email, how) in every entry. */
export const userAudit =
  (tx: Prisma.TransactionClient, actor: Actor, userId: string, reason: string | null, base: Record<string, unknown>) =>
  (action: string, details: Record<string, unknown>) =>
    recordAudit(tx, {
      actor,
      action,
      subjectType: "user",
      subjectId: userId,
      reason,
      details: { ...base, ...details },
    });

/**
 * Sets a user's role, and their tenant memberships unless `tenants` is null, where they
 * differ from what they are, with one audit entry per change. Shared by the admin screen
 * (updateUser) and single sign-on, which applies what the provider's groups grant.
 * Throws LastAdminError, before writing anything, when it would demote the last active admin.
 */
export async function applyRoleAndTenants(
  tx: Prisma.TransactionClient,
  user: { id: string; role: string; tenants: { tenant: { slug: string } }[] },
  role: Role,
  tenants: { id: string; slug: string }[] | null,
  audit: UserAudit,
): Promise<void> {
  const userId = user.id;
  if (role !== user.role) {
    if (user.role === "admin") await refuseLosingLastAdmin(tx, userId);
    await tx.user.update({ where: { id: userId }, data: { role } });
    await audit("user.role_change", { from: user.role, to: role });
  }
  if (!tenants) return;
  const before = user.tenants.map((m) => m.tenant.slug).sort();
  const after = tenants.map((t) => t.slug).sort();
  if (before.join() === after.join()) return;
  await tx.tenantMember.deleteMany({ where: { userId, tenantId: { notIn: tenants.map((t) => t.id) } } });
  await tx.tenantMember.createMany({ data: tenants.map((t) => ({ userId, tenantId: t.id })), skipDuplicates: true });
  await audit("user.tenants_change", { from: before, to: after });
}

export type UserChange = { role?: string; tenants?: string[]; disabled?: boolean; reason?: string | null };

/** Changes a user's role, tenant memberships and/or disabled state, auditing each change. Disabling also ends their sessions. */
export async function updateUser(userId: string, change: UserChange, actor: Actor): Promise<DomainResult<UserRow>> {
  const user = await prisma.user.findUnique({
    where: { id: userId },
    include: { tenants: { include: { tenant: true } } },
  });
  if (!user) return { ok: false, reason: "not_found", message: `No user ${userId}` };
  if (change.role !== undefined && !ROLES.includes(change.role as Role))
    return { ok: false, reason: "invalid_role", message: `Role must be one of ${ROLES.join(", ")}` };
  const role = (change.role ?? user.role) as Role;
  const wanted = change.tenants ? [...new Set(change.tenants)] : user.tenants.map((m) => m.tenant.slug);
  const tenants = await prisma.tenant.findMany({ where: { slug: { in: wanted } } });
  const missing = wanted.filter((s) => !tenants.some((t) => t.slug === s));
  if (missing.length)
    return {
      ok: false,
      reason: "unknown_tenant",
      message: `Unknown tenant${missing.length > 1 ? "s" : ""} ${missing.map((s) => `"${s}"`).join(", ")}`,
    };
  if (role !== "admin" && tenants.length === 0)
    return { ok: false, reason: "no_tenant", message: `A ${role} user must belong to at least one tenant` };
  try {
    await prisma.$transaction(async (tx) => {
      const audit = userAudit(tx, actor, userId, change.reason ?? null, { email: user.email });
      if (change.disabled === true && !user.disabledAt && user.role === "admin")
        await refuseLosingLastAdmin(tx, userId);
      await applyRoleAndTenants(tx, user, role, change.tenants ? tenants : null, audit);
      if (change.disabled === true && !user.disabledAt) {
        await tx.user.update({ where: { id: userId }, data: { disabledAt: new Date() } });
        await audit("user.disable", {});
        await revokeUserSessions(tx, userId, actor, change.reason ?? "user disabled");
      } else if (change.disabled === false && user.disabledAt) {
        await tx.user.update({ where: { id: userId }, data: { disabledAt: null } });
        await audit("user.enable", {});
      }
    });
  } catch (error) {
    if (error instanceof LastAdminError) return { ok: false, reason: "last_admin", message: error.message };
    throw error;
  }
  const row = (await listUsers()).find((u) => u.id === userId)!;
  return { ok: true, value: row };
}
