// Password-guessing brake: too many failed sign-ins for one email or from one
// address within the window and further attempts get 429 until it slides past.
// Failures live in login_failures so the brake survives restarts and holds
// across web processes. Two racing attempts may both slip under the limit by
// one; that bounds a guesser just the same.
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";

export type LimitVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; scope: "email" | "ip" };

function windowMs(): number {
  return config().TALLY_LOGIN_WINDOW_MINUTES * 60_000;
}

async function verdictFor(scope: "email" | "ip", value: string, max: number, now: Date): Promise<LimitVerdict> {
  const since = new Date(now.getTime() - windowMs());
  const where = scope === "email" ? { email: value, at: { gt: since } } : { ip: value, at: { gt: since } };
  // The max-th newest failure decides: once it leaves the window, one more attempt is allowed.
  const recent = await prisma.loginFailure.findMany({ where, orderBy: { at: "desc" }, take: max, select: { at: true } });
  if (max === 0 || recent.length < max) return { ok: true };
  const oldest = recent[recent.length - 1]!.at;
  return { ok: false, scope, retryAfterSeconds: Math.max(1, Math.ceil((oldest.getTime() + windowMs() - now.getTime()) / 1000)) };
}

export async function checkLoginLimit(email: string, ip: string, now = new Date()): Promise<LimitVerdict> {
  const c = config();
  const byEmail = await verdictFor("email", email, c.TALLY_LOGIN_MAX_FAILURES_PER_EMAIL, now);
  if (!byEmail.ok) return byEmail;
  return verdictFor("ip", ip, c.TALLY_LOGIN_MAX_FAILURES_PER_IP, now);
}

export async function recordLoginFailure(email: string, ip: string, now = new Date()): Promise<void> {
  const stale = new Date(now.getTime() - windowMs());
  await prisma.$transaction([
    prisma.loginFailure.create({ data: { email, ip, at: now } }),
    // Keep the table small: rows that left the window count for nothing.
    prisma.loginFailure.deleteMany({ where: { OR: [{ email, at: { lt: stale } }, { ip, at: { lt: stale } }] } }),
  ]);
}

/** A successful sign-in forgives the email's failures (not the address's: others may share it). */
export async function clearLoginFailures(email: string): Promise<void> {
  await prisma.loginFailure.deleteMany({ where: { email } });
}
