// API tokens give machines one tenant's JSON API with one role. The token is
// shown once; only its SHA-256 is stored, so a database leak leaks no token.
import { createHash, randomBytes } from "node:crypto";
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";
import type { DomainResult } from "@/lib/platform/refusal";

const ROLES: readonly Role[] = ["ops", "accountant", "admin"];

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function createApiToken(
  input: { tenant: string; role: string; name?: string },
  actor: Actor,
): Promise<DomainResult<{ id: string; token: string; prefix: string }>> {
  if (!ROLES.includes(input.role as Role))
    return { ok: false, reason: "invalid_role", message: `Role must be one of ${ROLES.join(", ")}` };
  const tenant = await prisma.tenant.findUnique({ where: { slug: input.tenant } });
  if (!tenant) return { ok: false, reason: "unknown_tenant", message: `Unknown tenant "${input.tenant}"` };
  const token = `tly_${randomBytes(32).toString("base64url")}`;
  const prefix = token.slice(0, 10);
  const row = await prisma.$transaction(async (tx) => {
    const t = await tx.apiToken.create({
      data: {
        tenantId: tenant.id,
        role: input.role as Role,
        name: input.name ?? null,
        tokenHash: hashToken(token),
        prefix,
      },
    });
    await recordAudit(tx, {
      actor,
      action: "api_token.create",
      subjectType: "api_token",
      subjectId: t.id,
      tenantId: tenant.id,
      details: { role: input.role, name: input.name ?? null, prefix },
    });
    return t;
  });
  return { ok: true, value: { id: row.id, token, prefix } };
}

export type TokenPrincipal = { tokenId: string; tenantId: string; role: Role; prefix: string };

/** The principal behind a bearer token, or null for unknown or revoked tokens. */
export async function authenticateToken(token: string): Promise<TokenPrincipal | null> {
  if (!token.startsWith("tly_")) return null;
  const row = await prisma.apiToken.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row || row.revokedAt) return null;
  // Last use is informational; do not make every API call wait on it.
  void prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
  return { tokenId: row.id, tenantId: row.tenantId, role: row.role, prefix: row.prefix };
}
