// Server-side sessions: created at sign-in, checked on every request, ended by
// sign-out, an admin, or the idle and absolute timeouts. The cookie carries a
// random secret; the row's id is its SHA-256, so a database leak reveals no cookie.
import { createHash, randomBytes } from "node:crypto";
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { config } from "@/lib/platform/config";
import { prisma, type Tx } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";
import type { DomainResult } from "@/lib/platform/refusal";

export type SessionUser = {
  sessionId: string;
  csrfToken: string;
  userId: string;
  email: string;
  name: string | null;
  role: Role;
};

export function sessionIdFor(cookieValue: string): string {
  return createHash("sha256").update(cookieValue).digest("hex");
}

export function sessionLimits(): { idleMs: number; absoluteMs: number } {
  const c = config();
  return { idleMs: c.TALLY_SESSION_IDLE_MINUTES * 60_000, absoluteMs: c.TALLY_SESSION_ABSOLUTE_HOURS * 3_600_000 };
}

/** Creates a session inside the caller's transaction; the cookie value is returned once. */
export async function createSession(
  tx: Tx,
  userId: string,
  now = new Date(),
): Promise<{ cookieValue: string; sessionId: string; expiresAt: Date }> {
  const cookieValue = randomBytes(32).toString("base64url");
  const sessionId = sessionIdFor(cookieValue);
  const expiresAt = new Date(now.getTime() + sessionLimits().absoluteMs);
  await tx.session.create({
    data: {
      id: sessionId,
      userId,
      csrfToken: randomBytes(32).toString("base64url"),
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
    },
  });
  return { cookieValue, sessionId, expiresAt };
}

// Writing last_seen_at on every request would turn every page view into a
// write; a minute's slack on a timeout measured in tens of minutes is harmless.
const TOUCH_AFTER_MS = 60_000;

/** The signed-in user behind a cookie, or null when the session is unknown, revoked, expired or the user disabled. */
export async function resolveSession(cookieValue: string, now = new Date()): Promise<SessionUser | null> {
  const session = await prisma.session.findUnique({
    where: { id: sessionIdFor(cookieValue) },
    include: { user: true },
  });
  if (!session || session.revokedAt || session.user.disabledAt) return null;
  if (session.expiresAt <= now) return null;
  if (now.getTime() - session.lastSeenAt.getTime() >= sessionLimits().idleMs) return null;
  if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_AFTER_MS) {
    await prisma.session.update({ where: { id: session.id }, data: { lastSeenAt: now } });
  }
  return {
    sessionId: session.id,
    csrfToken: session.csrfToken,
    userId: session.userId,
    email: session.user.email,
    name: session.user.name,
    role: session.user.role,
  };
}

/** Sign-out: revokes the caller's own session. */
export async function endSession(user: SessionUser): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.session.update({ where: { id: user.sessionId }, data: { revokedAt: new Date() } });
    await recordAudit(tx, {
      actor: { type: "USER", id: user.userId, label: user.email },
      action: "user.sign_out",
      subjectType: "user",
      subjectId: user.userId,
      details: { session: user.sessionId.slice(0, 12) },
    });
  });
}

/** Revokes every live session of a user (an admin's action, or part of disabling the user). */
export async function revokeUserSessions(
  tx: Tx,
  userId: string,
  actor: Actor,
  reason?: string | null,
): Promise<number> {
  const r = await tx.session.updateMany({
    where: { userId, revokedAt: null, expiresAt: { gt: new Date() } },
    data: { revokedAt: new Date() },
  });
  await recordAudit(tx, {
    actor,
    action: "user.sessions_revoke",
    subjectType: "user",
    subjectId: userId,
    reason,
    details: { revoked: r.count },
  });
  return r.count;
}

export async function revokeSessionsOf(
  userId: string,
  actor: Actor,
  reason?: string | null,
): Promise<DomainResult<{ revoked: number }>> {
  const user = await prisma.user.findUnique({ where: { id: userId } });
  if (!user) return { ok: false, reason: "not_found", message: `No user ${userId}` };
  const revoked = await prisma.$transaction((tx) => revokeUserSessions(tx, userId, actor, reason));
  return { ok: true, value: { revoked } };
}
