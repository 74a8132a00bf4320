// Just-in-time users for single sign-on: the first sign-in creates the person, later
// ones bring their role, tenants, email and name in line with what the ID token's claims
// now say. Every change is audited in the same transaction, naming the identity
// provider as who, the groups as why.
import { type Actor, recordAudit } from "@/lib/admin/audit";
import { applyRoleAndTenants, LastAdminError, userAudit } from "@/lib/admin/users";
import type { OidcSettings } from "@/lib/auth/oidc/provider";
import type { OidcRefusal } from "@/lib/auth/oidc/refusals";
import type { Grant } from "@/lib/auth/oidc/role-map";
import { prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";

export type SsoIdentity = {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  groups: string[];
};

export type ProvisionedUser = { id: string; email: string; role: Role };

/**
 * Two first sign-ins of one person at once (two tabs) both find no user and both create
 * one; the unique (issuer, subject) and email indexes let one win, and the other, run
 * again, finds the winner's row and updates it like any later sign-in.
 */
export async function provisionSsoUser(
  identity: SsoIdentity,
  grant: Grant,
  s: Pick<OidcSettings, "name" | "groupsClaim">,
): Promise<{ ok: true; user: ProvisionedUser } | OidcRefusal> {
  try {
    try {
      return await provisionOnce(identity, grant, s);
    } catch (error) {
      if ((error as { code?: string }).code !== "P2002") throw error;
      return await provisionOnce(identity, grant, s);
    }
  } catch (error) {
    // The provider's groups no longer make this person an admin, and no one else is:
    // demoting them would leave Tally with no one to administer it, so nothing changes.
    if (!(error instanceof LastAdminError)) throw error;
    return {
      ok: false,
      reason: "last_admin",
      message:
        "Your groups at the identity provider no longer make you an admin, but you are Tally's last active admin. Make someone else admin first (or restore your admin group); until then, sign in with your password.",
    };
  }
}

async function provisionOnce(
  identity: SsoIdentity,
  grant: Grant,
  s: Pick<OidcSettings, "name" | "groupsClaim">,
): Promise<{ ok: true; user: ProvisionedUser } | OidcRefusal> {
  const tenants = await prisma.tenant.findMany({ where: { slug: { in: grant.tenants } } });
  const missing = grant.tenants.filter((slug) => !tenants.some((t) => t.slug === slug));
  if (missing.length)
    return {
      ok: false,
      reason: "unknown_mapped_tenant",
      message: `Your groups map you to ${missing.map((m) => `"${m}"`).join(", ")}, which Tally has no tenant for. Ask an admin to correct TALLY_OIDC_ROLE_MAP.`,
    };

  const actor: Actor = { type: "SYSTEM", id: identity.issuer, label: `sso:${s.name}` };
  const why = `ID token ${s.groupsClaim} ${grant.groups.join(", ")} map to ${grant.role}${
    grant.tenants.length ? ` on ${grant.tenants.join(", ")}` : " (every tenant)"
  }`;
  const where = { oidcIssuer_oidcSubject: { oidcIssuer: identity.issuer, oidcSubject: identity.subject } };

  let user = await prisma.user.findUnique({ where, include: { tenants: { include: { tenant: true } } } });
  let linking = false;
  if (!user) {
    const byEmail = await prisma.user.findUnique({
      where: { email: identity.email },
      include: { tenants: { include: { tenant: true } } },
    });
    if (byEmail && byEmail.oidcIssuer === identity.issuer && byEmail.oidcSubject === identity.subject) {
      // Created by a concurrent first sign-in of this person between the two reads.
      user = byEmail;
    } else if (byEmail) {
      // Joining an existing account to a provider identity by email hands that account to
      // whoever controls the email at the provider: only when the provider vouches for it.
      if (byEmail.oidcSubject !== null || !identity.emailVerified)
        return {
          ok: false,
          reason: "email_taken",
          message: `A Tally user with the email ${identity.email} already exists${
            byEmail.oidcSubject !== null
              ? " and belongs to another identity at the provider"
              : ", and the identity provider has not verified that this email is yours"
          }. Ask an admin.`,
        };
      user = byEmail;
      linking = true;
    }
  }
  if (user && user.email !== identity.email && (await prisma.user.findUnique({ where: { email: identity.email } })))
    return {
      ok: false,
      reason: "email_taken",
      message: `Your email at the identity provider is now ${identity.email}, which another Tally user has. Ask an admin.`,
    };
  if (user?.disabledAt)
    return {
      ok: false,
      reason: "user_disabled",
      message: "Your Tally account is disabled. Ask an admin to enable it.",
    };

  const id = await prisma.$transaction(async (tx) => {
    if (!user) {
      const created = await tx.user.create({
        data: {
          email: identity.email,
          name: identity.name,
          role: grant.role,
          passwordHash: null,
          oidcIssuer: identity.issuer,
          oidcSubject: identity.subject,
          tenants: { create: tenants.map((t) => ({ tenantId: t.id })) },
        },
      });
      // One entry per tenant naming only that tenant, as lib/admin/users.ts does.
      for (const t of tenants.length ? tenants : [null])
        await recordAudit(tx, {
          actor,
          action: "user.create",
          subjectType: "user",
          subjectId: created.id,
          tenantId: t?.id ?? null,
          reason: why,
          details: { email: identity.email, role: grant.role, tenants: t ? [t.slug] : [], via: "oidc" },
        });
      return created.id;
    }
    const userId = user.id;
    const audit = userAudit(tx, actor, userId, why, { email: identity.email, via: "oidc" });
    if (linking) {
      await tx.user.update({
        where: { id: userId },
        data: { oidcIssuer: identity.issuer, oidcSubject: identity.subject },
      });
      await audit("user.sso_link", { issuer: identity.issuer, subject: identity.subject });
    }
    if (user.email !== identity.email || (identity.name !== null && user.name !== identity.name)) {
      await tx.user.update({
        where: { id: userId },
        data: { email: identity.email, ...(identity.name !== null && { name: identity.name }) },
      });
      await audit("user.profile_change", {
        from: { email: user.email, name: user.name },
        to: { email: identity.email, name: identity.name ?? user.name },
      });
    }
    await applyRoleAndTenants(tx, user, grant.role, tenants, audit);
    return userId;
  });
  return { ok: true, user: { id, email: identity.email, role: grant.role } };
}
