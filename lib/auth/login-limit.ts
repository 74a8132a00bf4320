// Password-guessing brakes, none of which locks anyone out:
// - per account and client address (or per account and known device): after
//   TALLY_LOGIN_FREE_FAILURES failures, each further attempt must wait twice as
//   long as the one before (2 s, 4 s, … up to TALLY_LOGIN_BACKOFF_MAX_SECONDS)
//   after the last failure. Other addresses and known devices are not held back,
//   so a guesser cannot lock an accountant out; a guesser spread over many
//   addresses gets a few tries per address, and generated passwords outlast that.
// - per address, across accounts: at most TALLY_LOGIN_MAX_FAILURES_PER_IP per
//   window (password spraying from one place).
// Failures live in login_failures so the brakes survive restarts and hold across
// web processes. Two racing attempts may both pass one check; that bounds a
// guesser just the same.
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";

export type LimitVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; scope: "account" | "ip" };

/** Where an attempt comes from: the client address, and the known device if any. */
export type Origin = { ip: string; device: string | null };

// A back-off bucket remembers failures this long, so waiting out the cap does
// not hand a guesser a fresh set of free attempts.
const BACKOFF_MEMORY_MS = 24 * 3600_000;

function windowMs(): number {
  return config().TALLY_LOGIN_WINDOW_MINUTES * 60_000;
}

/** Seconds to wait after the last failure, given how many failures the bucket holds. */
export function backoffSeconds(failures: number): number {
  const c = config();
  if (failures < c.TALLY_LOGIN_FREE_FAILURES) return 0;
  return Math.min(c.TALLY_LOGIN_BACKOFF_MAX_SECONDS, 2 ** Math.min(30, failures - c.TALLY_LOGIN_FREE_FAILURES + 1));
}

const bucket = (email: string, from: Origin) =>
  from.device ? { email, device: from.device } : { email, ip: from.ip, device: null };

async function accountVerdict(email: string, from: Origin, now: Date): Promise<LimitVerdict> {
  const where = { ...bucket(email, from), at: { gt: new Date(now.getTime() - BACKOFF_MEMORY_MS) } };
  const [count, last] = await Promise.all([
    prisma.loginFailure.count({ where }),
    prisma.loginFailure.findFirst({ where, orderBy: { at: "desc" }, select: { at: true } }),
  ]);
  const wait = backoffSeconds(count) * 1000;
  if (!last || wait === 0) return { ok: true };
  const remaining = last.at.getTime() + wait - now.getTime();
  return remaining > 0
    ? { ok: false, scope: "account", retryAfterSeconds: Math.max(1, Math.ceil(remaining / 1000)) }
    : { ok: true };
}

async function addressVerdict(ip: string, now: Date): Promise<LimitVerdict> {
  const max = config().TALLY_LOGIN_MAX_FAILURES_PER_IP;
  if (max === 0) return { ok: true };
  const since = new Date(now.getTime() - windowMs());
  // The max-th newest failure decides: once it leaves the window, one more attempt is allowed.
  const recent = await prisma.loginFailure.findMany({
    where: { ip, at: { gt: since } },
    orderBy: { at: "desc" },
    take: max,
    select: { at: true },
  });
  if (recent.length < max) return { ok: true };
  const oldest = recent[recent.length - 1]!.at;
  return {
    ok: false,
    scope: "ip",
    retryAfterSeconds: Math.max(1, Math.ceil((oldest.getTime() + windowMs() - now.getTime()) / 1000)),
  };
}

export async function checkLoginLimit(email: string, from: Origin, now = new Date()): Promise<LimitVerdict> {
  const account = await accountVerdict(email, from, now);
  if (!account.ok) return account;
  // A known device has proved it signed in here before: others' spraying from its address does not hold it back.
  return from.device ? { ok: true } : addressVerdict(from.ip, now);
}

export async function recordLoginFailure(email: string, from: Origin, now = new Date()): Promise<void> {
  const stale = new Date(now.getTime() - Math.max(windowMs(), BACKOFF_MEMORY_MS));
  await prisma.$transaction([
    prisma.loginFailure.create({ data: { email, ip: from.ip, device: from.device, at: now } }),
    // Keep the table small: rows older than every brake's memory count for nothing.
    prisma.loginFailure.deleteMany({
      where: {
        OR: [
          { email, at: { lt: stale } },
          { ip: from.ip, at: { lt: stale } },
        ],
      },
    }),
  ]);
}

/**
 * A successful sign-in forgives its own bucket's failures (this account from this
 * address or device), not others': a guesser elsewhere keeps their back-off, and
 * the address keeps its count (others may share it).
 */
export async function clearLoginFailures(email: string, from: Origin): Promise<void> {
  await prisma.loginFailure.deleteMany({ where: bucket(email, from) });
}
