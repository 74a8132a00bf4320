// Email + password sign-in. Every answer for a wrong email, a wrong password
// or a disabled user is the same and takes as long, so it reveals no account.
import { recordAudit } from "@/lib/admin/audit";
import { checkLoginLimit, clearLoginFailures, recordLoginFailure } from "@/lib/auth/login-limit";
import { hashPassword, verifyPassword } from "@/lib/auth/passwords";
import { createSession, type SessionUser } from "@/lib/auth/sessions";
import { prisma } from "@/lib/platform/db";

export type SignInResult =
  | { ok: true; cookieValue: string; expiresAt: Date; user: Omit<SessionUser, "sessionId" | "csrfToken"> }
  | { ok: false; reason: "invalid_credentials"; message: string }
  | { ok: false; reason: "rate_limited"; message: string; retryAfterSeconds: number };

let decoy: Promise<string> | undefined;
// Verifying against a real hash when the email is unknown costs what a real check costs.
const decoyHash = () => (decoy ??= hashPassword("decoy password that matches nothing"));

export async function signIn(input: { email: string; password: string; ip: string }): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const limit = await checkLoginLimit(email, input.ip);
  if (!limit.ok) {
    const minutes = Math.ceil(limit.retryAfterSeconds / 60);
    return { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds, message: `Too many failed sign-ins ${limit.scope === "email" ? "for this email" : "from this address"}; try again in ${minutes} minute${minutes === 1 ? "" : "s"}` };
  }
  const user = await prisma.user.findUnique({ where: { email } });
  const matches = await verifyPassword(user?.passwordHash ?? (await decoyHash()), input.password);
  if (!user || !user.passwordHash || user.disabledAt || !matches) {
    await recordLoginFailure(email, input.ip);
    return { ok: false, reason: "invalid_credentials", message: "Wrong email or password" };
  }
  await clearLoginFailures(email);
  const session = await prisma.$transaction(async (tx) => {
    const s = await createSession(tx, user.id);
    await recordAudit(tx, { actor: { type: "USER", id: user.id, label: user.email }, action: "user.sign_in", subjectType: "user", subjectId: user.id, details: { session: s.sessionId.slice(0, 12), ip: input.ip } });
    return s;
  });
  return { ok: true, cookieValue: session.cookieValue, expiresAt: session.expiresAt, user: { userId: user.id, email: user.email, name: user.name, role: user.role } };
}
