// Email + password sign-in. Every answer for a wrong email, a wrong password
// or a disabled user is the same and takes as long, so it reveals no account.
import { recordAudit } from "@/lib/admin/audit";
import { deviceCookieValue, knownDevice } from "@/lib/auth/devices";
import { checkLoginLimit, clearLoginFailures, recordLoginFailure, type Origin } from "@/lib/auth/login-limit";
import { hashPassword, verifyPassword } from "@/lib/auth/passwords";
import { createSession, type SessionUser } from "@/lib/auth/sessions";
import { prisma } from "@/lib/platform/db";

export type SignInResult =
  | {
      ok: true;
      cookieValue: string;
      expiresAt: Date;
      deviceCookieValue: string;
      user: Omit<SessionUser, "sessionId" | "csrfToken">;
    }
  | { ok: false; reason: "invalid_credentials"; message: string }
  | { ok: false; reason: "rate_limited"; message: string; retryAfterSeconds: number };

let decoy: Promise<string> | undefined;
// Verifying against a real hash when the email is unknown costs what a real check costs.
const decoyHash = () => (decoy ??= hashPassword("decoy password that matches nothing"));

function wait(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** `ip` as derived by lib/auth/client-address.ts; `device` is the tally_device cookie as sent, if any. */
export async function signIn(input: {
  email: string;
  password: string;
  ip: string;
  device?: string | null;
}): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const user = await prisma.user.findUnique({ where: { email } });
  const from: Origin = { ip: input.ip, device: knownDevice(input.device ?? null, user) };
  const limit = await checkLoginLimit(email, from);
  if (!limit.ok) {
    const where = limit.scope === "account" ? "for this email from this address" : "from this address";
    return {
      ok: false,
      reason: "rate_limited",
      retryAfterSeconds: limit.retryAfterSeconds,
      message: `Too many failed sign-ins ${where}; try again in ${wait(limit.retryAfterSeconds)}`,
    };
  }
  const matches = await verifyPassword(user?.passwordHash ?? (await decoyHash()), input.password);
  if (!user?.passwordHash || user.disabledAt || !matches) {
    await recordLoginFailure(email, from);
    return { ok: false, reason: "invalid_credentials", message: "Wrong email or password" };
  }
  await clearLoginFailures(email, from);
  const session = await prisma.$transaction(async (tx) => {
    const s = await createSession(tx, user.id);
    await recordAudit(tx, {
      actor: { type: "USER", id: user.id, label: user.email },
      action: "user.sign_in",
      subjectType: "user",
      subjectId: user.id,
      details: { session: s.sessionId.slice(0, 12), ip: input.ip, knownDevice: from.device !== null },
    });
    return s;
  });
  return {
    ok: true,
    cookieValue: session.cookieValue,
    expiresAt: session.expiresAt,
    deviceCookieValue: deviceCookieValue(user, from.device),
    user: { userId: user.id, email: user.email, name: user.name, role: user.role },
  };
}
