import { describe, expect, it, beforeAll, afterEach } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { requireAccess, type Principal } from "@/lib/auth/access";
import { createApiToken } from "@/lib/auth/api-tokens";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { checkLoginLimit } from "@/lib/auth/login-limit";
import { hashPassword } from "@/lib/auth/passwords";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { resolveSession, sessionIdFor } from "@/lib/auth/sessions";
import { signIn } from "@/lib/auth/sign-in";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import type { Role } from "@/lib/generated/prisma/enums";
import { aTenant, unique, type TestTenant } from "@/dev/testing/builders";
import { createUser, updateUser } from "@/lib/admin/users";

const PASSWORD = "correct horse battery";
const ORIGIN = "http://tally.test";

async function aUser(role: Role, tenants: string[]) {
  const email = `${unique("u")}@example.test`;
  const r = await createUser({ email, role, tenants, password: PASSWORD }, SYSTEM_ACTOR);
  if (!r.ok) throw new Error(r.message);
  return { id: r.value.id, email };
}

async function signedIn(email: string, ip = "10.0.0.1") {
  const r = await signIn({ email, password: PASSWORD, ip });
  if (!r.ok) throw new Error(r.message);
  const session = await resolveSession(r.cookieValue);
  return { cookie: r.cookieValue, csrf: session!.csrfToken };
}

function request(
  path: string,
  o: { method?: string; cookie?: string; csrf?: string; origin?: string | null; site?: string; bearer?: string } = {},
): Request {
  const headers: Record<string, string> = { host: "tally.test" };
  if (o.cookie) headers.cookie = `other=1; tally_session=${o.cookie}`;
  if (o.csrf) headers["x-csrf-token"] = o.csrf;
  if (o.origin !== null) headers.origin = o.origin ?? ORIGIN;
  if (o.site) headers["sec-fetch-site"] = o.site;
  if (o.bearer) headers.authorization = `Bearer ${o.bearer}`;
  return new Request(`${ORIGIN}${path}`, { method: o.method ?? "GET", headers });
}

let a: TestTenant;
let b: TestTenant;
beforeAll(async () => {
  a = await aTenant();
  b = await aTenant();
});

describe("sessions", () => {
  it("signs in with the right password, storing only the SHA-256 of the cookie, and audits it", async () => {
    const u = await aUser("ops", [a.slug]);
    const r = await signIn({ email: u.email.toUpperCase(), password: PASSWORD, ip: "10.0.0.1" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(await prisma.session.findUnique({ where: { id: r.cookieValue } })).toBeNull();
    const row = await prisma.session.findUniqueOrThrow({ where: { id: sessionIdFor(r.cookieValue) } });
    expect(row.userId).toBe(u.id);
    expect(await prisma.auditLog.count({ where: { action: "user.sign_in", subjectId: u.id } })).toBe(1);
  });

  it("answers the same for a wrong password, an unknown email and a disabled user", async () => {
    const u = await aUser("ops", [a.slug]);
    const d = await aUser("ops", [a.slug]);
    await updateUser(d.id, { disabled: true }, SYSTEM_ACTOR);
    const answers = await Promise.all([
      signIn({ email: u.email, password: "wrong password!", ip: "10.0.1.1" }),
      signIn({ email: "nobody@example.test", password: PASSWORD, ip: "10.0.1.2" }),
      signIn({ email: d.email, password: PASSWORD, ip: "10.0.1.3" }),
    ]);
    for (const r of answers)
      expect(r).toEqual({ ok: false, reason: "invalid_credentials", message: "Wrong email or password" });
  });

  it("ends a session after the idle timeout and after the absolute timeout", async () => {
    const u = await aUser("ops", [a.slug]);
    const s = await signedIn(u.email);
    const id = sessionIdFor(s.cookie);
    expect(await resolveSession(s.cookie)).not.toBeNull();
    await prisma.session.update({ where: { id }, data: { lastSeenAt: new Date(Date.now() - 61 * 60_000) } });
    expect(await resolveSession(s.cookie)).toBeNull();
    const s2 = await signedIn(u.email);
    await prisma.session.update({
      where: { id: sessionIdFor(s2.cookie) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await resolveSession(s2.cookie)).toBeNull();
  });

  it("is revoked by sign-out and by an admin revoking the user's sessions", async () => {
    const u = await aUser("accountant", [a.slug]);
    const s = await signedIn(u.email);
    const { POST: logout } = await import("@/app/api/auth/logout/route");
    const res = await logout(request("/api/auth/logout", { method: "POST", cookie: s.cookie, csrf: s.csrf }));
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await resolveSession(s.cookie)).toBeNull();
    expect(await prisma.auditLog.count({ where: { action: "user.sign_out", subjectId: u.id } })).toBe(1);

    const s1 = await signedIn(u.email);
    const s2 = await signedIn(u.email);
    const { revokeSessionsOf } = await import("@/lib/auth/sessions");
    const r = await revokeSessionsOf(u.id, { type: "USER", id: "x", label: "admin@example.test" }, "lost laptop");
    expect(r).toEqual({ ok: true, value: { revoked: 2 } });
    expect(await resolveSession(s1.cookie)).toBeNull();
    expect(await resolveSession(s2.cookie)).toBeNull();
    expect(
      await prisma.auditLog.findFirst({ where: { action: "user.sessions_revoke", subjectId: u.id } }),
    ).toMatchObject({ reason: "lost laptop", actorLabel: "admin@example.test" });
  });

  it("ends the sessions of a user who is disabled", async () => {
    const u = await aUser("ops", [a.slug]);
    const s = await signedIn(u.email);
    await updateUser(u.id, { disabled: true, reason: "left" }, SYSTEM_ACTOR);
    expect(await resolveSession(s.cookie)).toBeNull();
  });
});

describe("CSRF", () => {
  it("refuses a cookie-authenticated POST without the session's token, with another token, or from another site", async () => {
    const u = await aUser("admin", []);
    const s = await signedIn(u.email);
    const path = `/api/v1/tenants/${a.slug}`;
    const cases: [string, Request][] = [
      ["no token", request(path, { method: "POST", cookie: s.cookie })],
      ["wrong token", request(path, { method: "POST", cookie: s.cookie, csrf: "x".repeat(s.csrf.length) })],
      [
        "other origin",
        request(path, { method: "POST", cookie: s.cookie, csrf: s.csrf, origin: "https://evil.example" }),
      ],
      [
        "cross-site fetch metadata",
        request(path, { method: "DELETE", cookie: s.cookie, csrf: s.csrf, site: "cross-site" }),
      ],
      [
        "no origin and no fetch metadata",
        request(path, { method: "PATCH", cookie: s.cookie, csrf: s.csrf, origin: null }),
      ],
    ];
    for (const [name, req] of cases) {
      const r = await requireAccess(req, { tenant: a.slug });
      expect({ name, ...r }).toMatchObject({ name, ok: false, status: 403, code: "csrf_failed" });
    }
    expect(
      (
        await requireAccess(request(path, { method: "POST", cookie: s.cookie, csrf: s.csrf, site: "same-origin" }), {
          tenant: a.slug,
        })
      ).ok,
    ).toBe(true);
    // Reads need no token.
    expect((await requireAccess(request(path, { cookie: s.cookie }), { tenant: a.slug })).ok).toBe(true);
  });

  it("exempts bearer tokens, which a browser never attaches by itself", async () => {
    const t = await createApiToken({ tenant: a.slug, role: "admin" }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    const r = await requireAccess(request(`/x`, { method: "POST", bearer: t.value.token, origin: null }), {
      tenant: a.slug,
    });
    expect(r.ok).toBe(true);
  });
});

describe("sign-in brakes", () => {
  afterEach(() => {
    delete process.env.TALLY_LOGIN_MAX_FAILURES_PER_IP;
    delete process.env.TALLY_TRUSTED_PROXIES;
    resetConfigForTests();
  });

  const wrong = (email: string, ip: string, i: number, device?: string | null) =>
    signIn({ email, password: `wrong-${i}-password`, ip, device });
  /** Moves a bucket's failures into the past, as if that much time had gone by. */
  const age = (email: string, ms: number) =>
    prisma.$executeRaw`UPDATE login_failures SET at = at - make_interval(secs => ${ms / 1000}) WHERE email = ${email}`;

  it("backs one account off at one address after 5 failures, even for the right password, without locking it anywhere else", async () => {
    const u = await aUser("ops", [a.slug]);
    for (let i = 0; i < 5; i++)
      expect(await wrong(u.email, "10.1.0.1", i)).toMatchObject({ ok: false, reason: "invalid_credentials" });
    const held = await signIn({ email: u.email, password: PASSWORD, ip: "10.1.0.1" });
    expect(held).toMatchObject({ ok: false, reason: "rate_limited", retryAfterSeconds: 2 });
    // The same account from another address: not locked.
    expect((await signIn({ email: u.email, password: PASSWORD, ip: "10.1.0.2" })).ok).toBe(true);
    // Once the back-off has passed, the right password passes at the first address too.
    await age(u.email, 2_000);
    expect((await signIn({ email: u.email, password: PASSWORD, ip: "10.1.0.1" })).ok).toBe(true);
  });

  it("doubles the wait with each further failure, up to the cap", async () => {
    const u = await aUser("ops", [a.slug]);
    const waits: number[] = [];
    for (let i = 0; i < 14; i++) {
      const r = await wrong(u.email, "10.1.1.1", i);
      if (!r.ok && r.reason === "rate_limited") {
        waits.push(r.retryAfterSeconds);
        await age(u.email, r.retryAfterSeconds * 1000);
        i--;
        continue;
      }
      expect(r).toMatchObject({ reason: "invalid_credentials" });
    }
    expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512]);
    const capped = await wrong(u.email, "10.1.1.1", 99);
    expect(capped).toMatchObject({ reason: "rate_limited", retryAfterSeconds: 900 });
  });

  it("lets the right password from a known device through a back-off others caused at its address", async () => {
    const u = await aUser("accountant", [a.slug]);
    const first = await signIn({ email: u.email, password: PASSWORD, ip: "10.1.2.1" });
    if (!first.ok) throw new Error(first.message);
    const device = first.deviceCookieValue;
    for (let i = 0; i < 5; i++) await wrong(u.email, "10.1.2.1", i);
    // Five more failures as if waited out, so the back-off (now 64 s) outlasts the slow checks below.
    await prisma.loginFailure.createMany({
      data: Array.from({ length: 5 }, () => ({ email: u.email, ip: "10.1.2.1", at: new Date() })),
    });
    expect(await signIn({ email: u.email, password: PASSWORD, ip: "10.1.2.1" })).toMatchObject({
      reason: "rate_limited",
    });
    const known = await signIn({ email: u.email, password: PASSWORD, ip: "10.1.2.1", device });
    expect(known.ok).toBe(true);
    // A forged or other user's device cookie is just an unknown device.
    const other = await aUser("accountant", [a.slug]);
    const theirs = await signIn({ email: other.email, password: PASSWORD, ip: "10.1.2.9" });
    if (!theirs.ok) throw new Error(theirs.message);
    for (const forged of [theirs.deviceCookieValue, `${device.split(".")[0]}.${"A".repeat(43)}`, "x.y", ""]) {
      expect(await signIn({ email: u.email, password: PASSWORD, ip: "10.1.2.1", device: forged })).toMatchObject({
        reason: "rate_limited",
      });
    }
  });

  it("backs a known device off by its own failures", async () => {
    const u = await aUser("ops", [a.slug]);
    const first = await signIn({ email: u.email, password: PASSWORD, ip: "10.1.3.1" });
    if (!first.ok) throw new Error(first.message);
    for (let i = 0; i < 5; i++) await wrong(u.email, "10.1.3.1", i, first.deviceCookieValue);
    expect(
      await signIn({ email: u.email, password: PASSWORD, ip: "10.1.3.1", device: first.deviceCookieValue }),
    ).toMatchObject({ reason: "rate_limited", retryAfterSeconds: 2 });
    // Its failures are not the address's: an unknown device there is not held back by them.
    expect((await signIn({ email: u.email, password: PASSWORD, ip: "10.1.3.1" })).ok).toBe(true);
  });

  it("forgets every known device when the password changes", async () => {
    const u = await aUser("ops", [a.slug]);
    const first = await signIn({ email: u.email, password: PASSWORD, ip: "10.1.4.1" });
    if (!first.ok) throw new Error(first.message);
    for (let i = 0; i < 5; i++) await wrong(u.email, "10.1.4.1", i);
    await prisma.user.update({ where: { id: u.id }, data: { passwordHash: await hashPassword(PASSWORD) } });
    expect(
      await signIn({ email: u.email, password: PASSWORD, ip: "10.1.4.1", device: first.deviceCookieValue }),
    ).toMatchObject({ reason: "rate_limited" });
  });

  it("limits one address across many emails", async () => {
    process.env.TALLY_LOGIN_MAX_FAILURES_PER_IP = "3";
    resetConfigForTests();
    const ip = `10.2.${Math.floor(Math.random() * 250)}.9`;
    for (let i = 0; i < 3; i++) await signIn({ email: `${unique("x")}@example.test`, password: "nope-nope-nope", ip });
    expect(await checkLoginLimit(`${unique("fresh")}@example.test`, { ip, device: null })).toMatchObject({
      ok: false,
      scope: "ip",
    });
    expect(await checkLoginLimit(`${unique("fresh")}@example.test`, { ip: "10.3.0.1", device: null })).toEqual({
      ok: true,
    });
  });

  describe("through the login route", () => {
    const attempt = (email: string, password: string, headers: Record<string, string>) =>
      new Request(`${ORIGIN}/api/auth/login`, {
        method: "POST",
        headers: { host: "tally.test", origin: ORIGIN, "content-type": "application/json", ...headers },
        body: JSON.stringify({ email, password }),
      });

    it("a client rotating X-Forwarded-For stays one address: 429 with Retry-After, and the audit log has the real peer", async () => {
      const { POST: login } = await import("@/app/api/auth/login/route");
      const u = await aUser("ops", [a.slug]);
      for (let i = 0; i < 5; i++)
        expect(
          (
            await login(
              attempt(u.email, "wrong-password", { [PEER_HEADER]: "192.0.2.10", "x-forwarded-for": `203.0.113.${i}` }),
            )
          ).status,
        ).toBe(401);
      const res = await login(
        attempt(u.email, PASSWORD, { [PEER_HEADER]: "192.0.2.10", "x-forwarded-for": "198.51.100.1" }),
      );
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /Too many failed sign-ins for this email from this address; try again in \d+ seconds/,
      );
      // A spoofed address is not what gets audited.
      const ok = await login(
        attempt(u.email, PASSWORD, { [PEER_HEADER]: "::ffff:192.0.2.11", "x-forwarded-for": "6.6.6.6" }),
      );
      expect(ok.status).toBe(200);
      const audit = await prisma.auditLog.findFirstOrThrow({
        where: { action: "user.sign_in", subjectId: u.id },
        orderBy: { id: "desc" },
      });
      expect(audit.details).toMatchObject({ ip: "192.0.2.11" });
      // The known-device cookie comes with the session: HttpOnly, only for the sign-in endpoint.
      expect(ok.headers.getSetCookie().find((c) => c.startsWith("tally_device="))).toMatch(
        /Path=\/api\/auth\/login; Max-Age=\d+; HttpOnly; SameSite=Strict/,
      );
    });

    it("believes X-Forwarded-For only from a trusted proxy, and only up to the first address it does not trust", async () => {
      process.env.TALLY_TRUSTED_PROXIES = "10.0.0.0/8, 2001:db8::1";
      resetConfigForTests();
      const { POST: login } = await import("@/app/api/auth/login/route");
      const u = await aUser("ops", [a.slug]);
      // The client wrote "6.6.6.6, 10.9.9.9" itself; the proxies appended 198.51.100.7 and 10.0.0.3.
      const ok = await login(
        attempt(u.email, PASSWORD, {
          [PEER_HEADER]: "2001:db8::1",
          "x-forwarded-for": "6.6.6.6, 10.9.9.9, 198.51.100.7, 10.0.0.3",
        }),
      );
      expect(ok.status).toBe(200);
      const audit = await prisma.auditLog.findFirstOrThrow({
        where: { action: "user.sign_in", subjectId: u.id },
        orderBy: { id: "desc" },
      });
      expect(audit.details).toMatchObject({ ip: "198.51.100.7" });
    });
  });
});

describe("requireAccess", () => {
  const principals: Record<string, () => Promise<{ headers: Parameters<typeof request>[1] }>> = {};
  beforeAll(async () => {
    for (const role of ["ops", "accountant"] as const) {
      const u = await aUser(role, [a.slug]);
      const s = await signedIn(u.email);
      principals[`${role} of A`] = async () => ({ headers: { cookie: s.cookie } });
    }
    const admin = await aUser("admin", []);
    const s = await signedIn(admin.email);
    principals.admin = async () => ({ headers: { cookie: s.cookie } });
    const token = await createApiToken({ tenant: a.slug, role: "accountant" }, SYSTEM_ACTOR);
    if (!token.ok) throw new Error(token.message);
    principals["accountant token of A"] = async () => ({ headers: { bearer: token.value.token } });
  });

  it("grants each role × tenant × section exactly as the role table says, and hides other tenants as 404", async () => {
    const outcomes: string[] = [];
    for (const [name, make] of Object.entries(principals)) {
      const { headers } = await make();
      for (const tenant of [a, b]) {
        for (const [section, roles] of Object.entries(SECTION_ROLES)) {
          const r = await requireAccess(request(`/t`, headers), { tenant: tenant.slug, roles });
          outcomes.push(`${name} ${tenant === a ? "A" : "B"} ${section}: ${r.ok ? "ok" : r.status}`);
        }
      }
    }
    const role = (name: string): Role =>
      name.startsWith("ops") ? "ops" : name.includes("accountant") ? "accountant" : "admin";
    const expected = Object.keys(principals).flatMap((name) =>
      ["A", "B"].flatMap((t) =>
        Object.entries(SECTION_ROLES).map(([section, roles]) => {
          const sees = t === "A" || name === "admin";
          return `${name} ${t} ${section}: ${!sees ? 404 : roles.includes(role(name)) ? "ok" : 403}`;
        }),
      ),
    );
    expect(outcomes).toEqual(expected);
  });

  it("answers 404 alike for a tenant that does not exist and one the principal cannot see", async () => {
    const { headers } = await principals["ops of A"]!();
    const missing = await requireAccess(request("/t", headers), { tenant: "no-such-tenant" });
    const hidden = await requireAccess(request("/t", headers), { tenant: b.slug });
    expect(missing).toMatchObject({ ok: false, status: 404, code: "unknown_tenant" });
    expect(hidden).toMatchObject({ ok: false, status: 404, code: "unknown_tenant" });
  });

  it("answers 401 without credentials, with an unknown or revoked token, and with an ended session", async () => {
    expect(await requireAccess(request("/t"), { tenant: a.slug })).toMatchObject({ status: 401 });
    expect(await requireAccess(request("/t", { bearer: "tly_nope" }), { tenant: a.slug })).toMatchObject({
      status: 401,
    });
    const t = await createApiToken({ tenant: a.slug, role: "ops" }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    expect((await requireAccess(request("/t", { bearer: t.value.token }), { tenant: a.slug })).ok).toBe(true);
    await prisma.apiToken.update({ where: { id: t.value.id }, data: { revokedAt: new Date() } });
    expect(await requireAccess(request("/t", { bearer: t.value.token }), { tenant: a.slug })).toMatchObject({
      status: 401,
    });
    expect(await requireAccess(request("/t", { cookie: "forged" }), { tenant: a.slug })).toMatchObject({
      status: 401,
      message: "Your session has ended; sign in again",
    });
  });

  it("keeps global admin actions for people: an admin token is refused", async () => {
    const t = await createApiToken({ tenant: a.slug, role: "admin" }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    const r = await requireAccess(request("/api/v1/users", { bearer: t.value.token }), {
      roles: ["admin"],
      usersOnly: true,
    });
    expect(r).toMatchObject({ ok: false, status: 403 });
  });

  it("sees a role change on the next request", async () => {
    const u = await aUser("ops", [a.slug]);
    const s = await signedIn(u.email);
    const ledger = () =>
      requireAccess(request("/t", { cookie: s.cookie }), { tenant: a.slug, roles: SECTION_ROLES.ledger });
    expect(await ledger()).toMatchObject({ status: 403 });
    await updateUser(u.id, { role: "accountant" }, SYSTEM_ACTOR);
    const r = await ledger();
    expect(r.ok && (r.principal as Principal).role).toBe("accountant");
  });
});
