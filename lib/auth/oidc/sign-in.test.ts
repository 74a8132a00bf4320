// Single sign-on against a real OpenID provider (oidc-provider on a loopback port, its
// own login and consent pages driven over HTTP): the callback accepts only the answer to
// the sign-in this browser started, from our issuer, for our client, with our nonce, and
// only people whose groups map to a role; then it opens an ordinary session.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { GET as callback } from "@/app/api/auth/oidc/callback/route";
import { GET as start } from "@/app/api/auth/oidc/start/route";
import { startOidcProvider, type TestAccount, type TestOidcProvider } from "@/dev/oidc/provider";
import { aTenant, type TestTenant, unique } from "@/dev/testing/builders";
import { createUser } from "@/lib/admin/users";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { OIDC_COOKIE, readCookie, SESSION_COOKIE } from "@/lib/auth/cookies";
import { forgetOidcProviderForTests } from "@/lib/auth/oidc/provider";
import { resolveSession } from "@/lib/auth/sessions";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";

const TALLY = "http://tally.test";
const CALLBACK = `${TALLY}/api/auth/oidc/callback`;

let provider: TestOidcProvider;
let acme: TestTenant;
// The provider's people; each test adds its own, so tests sharing this file's database do not meet.
const accounts: Record<string, TestAccount> = {};

/** Someone at the provider in these groups; returns their login (also their email's local part). */
function aPerson(groups: string[], o: { emailVerified?: boolean; login?: string } = {}): string {
  const login =
    o.login ??
    unique("p")
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "");
  accounts[login] = { email: `${login}@sso.test`, name: `Person ${login}`, groups, emailVerified: o.emailVerified };
  return login;
}
const userOf = (login: string) => prisma.user.findUnique({ where: { email: `${login}@sso.test` } });

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [CALLBACK], accounts });
  acme = await aTenant();
});
afterAll(() => provider.close());

function configure(env: Record<string, string> = {}) {
  vi.stubEnv("TALLY_OIDC_ISSUER", provider.issuer);
  vi.stubEnv("TALLY_OIDC_CLIENT_ID", provider.clientId);
  vi.stubEnv("TALLY_OIDC_CLIENT_SECRET", provider.clientSecret);
  vi.stubEnv("TALLY_OIDC_REDIRECT_BASE_URL", TALLY);
  vi.stubEnv("TALLY_OIDC_NAME", "Test IdP");
  vi.stubEnv("TALLY_OIDC_SCOPES", "openid email profile groups");
  vi.stubEnv(
    "TALLY_OIDC_ROLE_MAP",
    `tally-admins=*:admin, acme-finance=${acme.slug}:accountant, acme-ops=${acme.slug}:ops`,
  );
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  resetConfigForTests();
  forgetOidcProviderForTests();
}

beforeEach(() => configure());
afterEach(() => {
  provider.tamper(null);
  vi.unstubAllEnvs();
  resetConfigForTests();
  forgetOidcProviderForTests();
});

/** GET /api/auth/oidc/start: where the browser is sent, and the cookie it keeps. */
async function begin(next = "/") {
  const res = await start(new Request(`${TALLY}/api/auth/oidc/start?next=${encodeURIComponent(next)}`));
  expect(res.status).toBe(303);
  const handle = readCookie(res.headers.get("set-cookie"), OIDC_COOKIE);
  expect(handle).toBeTruthy();
  return { authorize: new URL(res.headers.get("location")!), handle: handle! };
}

/**
 * A browser at the provider: follows its redirects, fills its login form as `login`
 * (any password) and confirms its consent form, or presses "Cancel" when told to,
 * until the provider sends it back to Tally's callback.
 */
async function throughProvider(authorize: URL, login: string, { cancel = false } = {}): Promise<URL> {
  const jar = new Map<string, string>();
  let url = authorize.href;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? "POST" : "GET",
      body: form,
      redirect: "manual",
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(";")[0]!;
      jar.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    form = undefined;
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get("location")!, url);
      if (next.href.startsWith(CALLBACK)) return next;
      url = next.href;
      continue;
    }
    const html = await res.text();
    if (cancel) {
      const abort = /href="([^"]*abort[^"]*)"/.exec(html)?.[1];
      if (!abort) throw new Error(`no cancel link on the provider's page: ${html.slice(0, 200)}`);
      url = new URL(abort, url).href;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`provider page ${res.status} without a form: ${html.slice(0, 300)}`);
    url = new URL(action, url).href;
    form =
      prompt === "login" ? new URLSearchParams({ prompt, login, password: "any" }) : new URLSearchParams({ prompt });
  }
  throw new Error("the provider never sent the browser back");
}

async function finish(back: URL, handle: string | null) {
  const res = await callback(new Request(back.href, { headers: handle ? { cookie: `${OIDC_COOKIE}=${handle}` } : {} }));
  const text = res.status === 303 ? "" : await res.text();
  return { res, text, reason: res.headers.get("x-tally-refusal") };
}

async function signInAs(login: string, next = "/") {
  const { authorize, handle } = await begin(next);
  return finish(await throughProvider(authorize, login), handle);
}

describe("single sign-on through a real OpenID provider", () => {
  it("a person whose group is mapped gets a session with that role and tenant, provisioned and audited", async () => {
    const alice = aPerson(["everyone", "acme-finance"]);
    const { res } = await signInAs(alice, `/t/${acme.slug}/ledger`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${TALLY}/t/${acme.slug}/ledger`);
    const cookies = res.headers.getSetCookie();
    const session = readCookie(cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? null, SESSION_COOKIE);
    expect(cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))).toMatch(/HttpOnly; SameSite=Lax/);
    const user = await resolveSession(session!);
    expect(user).toMatchObject({ email: `${alice}@sso.test`, name: `Person ${alice}`, role: "accountant" });
    const row = await prisma.user.findUniqueOrThrow({
      where: { id: user!.userId },
      include: { tenants: { include: { tenant: true } } },
    });
    expect(row.tenants.map((m) => m.tenant.slug)).toEqual([acme.slug]);
    expect(row).toMatchObject({ oidcIssuer: provider.issuer, oidcSubject: alice, passwordHash: null });
    const audit = await prisma.auditLog.findMany({ where: { subjectId: row.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["user.create", "user.sign_in"]);
    expect(audit[0]).toMatchObject({
      actorType: "SYSTEM",
      actorId: provider.issuer,
      actorLabel: "sso:Test IdP",
      tenantId: acme.id,
      reason: `ID token groups acme-finance map to accountant on ${acme.slug}`,
    });
    expect(audit[1]!.details).toMatchObject({ via: "oidc", issuer: provider.issuer });
  });

  it("a later sign-in brings the role in line with the groups, auditing the change", async () => {
    const erin = aPerson(["acme-ops"]);
    expect((await signInAs(erin)).res.status).toBe(303);
    configure({ TALLY_OIDC_ROLE_MAP: `acme-ops=${acme.slug}:accountant` });
    const { res } = await signInAs(erin);
    expect(res.status).toBe(303);
    const user = (await userOf(erin))!;
    expect(user.role).toBe("accountant");
    const change = await prisma.auditLog.findFirstOrThrow({
      where: { subjectId: user.id, action: "user.role_change" },
    });
    expect(change.details).toMatchObject({ from: "ops", to: "accountant" });
    expect(change.reason).toBe(`ID token groups acme-ops map to accountant on ${acme.slug}`);
  });

  it("four first sign-ins of one person completed at once make one user and four sessions", async () => {
    const twin = aPerson(["acme-ops"]);
    const tabs = [];
    for (let i = 0; i < 4; i++) {
      const { authorize, handle } = await begin();
      tabs.push({ back: await throughProvider(authorize, twin), handle });
    }
    const results = await Promise.all(tabs.map((t) => finish(t.back, t.handle)));
    expect(results.map((r) => r.res.status)).toEqual([303, 303, 303, 303]);
    const user = (await userOf(twin))!;
    expect(await prisma.session.count({ where: { userId: user.id } })).toBe(4);
    expect(await prisma.auditLog.count({ where: { subjectId: user.id, action: "user.create" } })).toBe(1);
  });

  it("groups that would demote Tally's last active admin are refused, and the admin stays admin", async () => {
    const dana = aPerson(["tally-admins"]);
    expect((await signInAs(dana)).res.status).toBe(303);
    const user = (await userOf(dana))!;
    const others = await prisma.user.findMany({
      where: { role: "admin", disabledAt: null, NOT: { id: user.id } },
      select: { id: true },
    });
    await prisma.user.updateMany({ where: { id: { in: others.map((o) => o.id) } }, data: { disabledAt: new Date() } });
    try {
      accounts[dana]!.groups = ["acme-ops"];
      const { res, reason, text } = await signInAs(dana);
      expect(res.status).toBe(409);
      expect(reason).toBe("last_admin");
      expect(text).toContain("last active admin");
      expect((await userOf(dana))!.role).toBe("admin");
      expect(await prisma.auditLog.count({ where: { subjectId: user.id, action: "user.role_change" } })).toBe(0);
    } finally {
      await prisma.user.updateMany({ where: { id: { in: others.map((o) => o.id) } }, data: { disabledAt: null } });
    }
  });

  it("an admin group maps to admin over every tenant", async () => {
    const { res } = await signInAs(aPerson(["tally-admins"], { login: "carol" }));
    expect(res.status).toBe(303);
    const carol = await prisma.user.findUniqueOrThrow({
      where: { email: "carol@sso.test" },
      include: { tenants: true },
    });
    expect(carol.role).toBe("admin");
    expect(carol.tenants).toEqual([]);
  });

  it("a person none of whose groups is mapped is refused, and no user is created", async () => {
    const bob = aPerson(["everyone", "contractors"]);
    const { res, text, reason } = await signInAs(bob);
    expect(res.status).toBe(403);
    expect(reason).toBe("no_mapped_role");
    expect(text).toContain("None of your groups (everyone, contractors) is mapped to a Tally role");
    expect(text).not.toMatch(/at .*\.ts:\d+/);
    expect(res.headers.getSetCookie().join()).not.toContain(`${SESSION_COOKIE}=`);
    expect(await userOf(bob)).toBeNull();
  });

  it("groups mapping to two different roles are refused rather than one guessed", async () => {
    const { res, reason, text } = await signInAs(aPerson(["acme-ops", "acme-finance"]));
    expect(res.status).toBe(403);
    expect(reason).toBe("conflicting_roles");
    expect(text).toContain("accountant, ops");
  });

  it("an answer carrying another sign-in's state is refused", async () => {
    const { authorize, handle } = await begin();
    const alice = aPerson(["acme-finance"]);
    const back = await throughProvider(authorize, alice);
    back.searchParams.set("state", "someone-elses-state");
    const { res, reason } = await finish(back, handle);
    expect(res.status).toBe(400);
    expect(reason).toBe("state_mismatch");
  });

  it("an ID token for another nonce than this browser's sign-in is refused", async () => {
    const { authorize, handle } = await begin();
    authorize.searchParams.set("nonce", "an-attackers-nonce");
    const alice = aPerson(["acme-finance"]);
    const { res, reason, text } = await finish(await throughProvider(authorize, alice), handle);
    expect(res.status).toBe(400);
    expect(reason).toBe("nonce_mismatch");
    expect(text).toContain("does not belong to the sign-in this browser started (nonce)");
    expect(await userOf(alice)).toBeNull();
  });

  it("a correctly signed ID token naming another nonce, audience or issuer is refused", async () => {
    const cases = [
      { claim: "nonce", value: "another-nonce", reason: "nonce_mismatch" },
      { claim: "aud", value: "another-application", reason: "audience_mismatch" },
      { claim: "iss", value: "https://impostor.test", reason: "issuer_mismatch" },
    ] as const;
    const alice = aPerson(["acme-finance"]);
    for (const c of cases) {
      const { authorize, handle } = await begin();
      const back = await throughProvider(authorize, alice);
      provider.tamper({ claim: c.claim, value: c.value });
      const { res, reason } = await finish(back, handle);
      provider.tamper(null);
      expect({ claim: c.claim, status: res.status, reason }).toEqual({ claim: c.claim, status: 400, reason: c.reason });
    }
    expect(await userOf(alice)).toBeNull();
  });

  it("a callback without this browser's cookie, or replayed, is refused", async () => {
    const { authorize, handle } = await begin();
    const back = await throughProvider(authorize, aPerson(["acme-finance"]));
    expect((await finish(back, null)).reason).toBe("no_sign_in_under_way");
    expect((await finish(back, "not-a-sign-in")).reason).toBe("no_sign_in_under_way");
    const first = await finish(back, handle);
    expect(first.res.status).toBe(303);
    const again = await finish(back, handle);
    expect(again.res.status).toBe(400);
    expect(again.reason).toBe("no_sign_in_under_way");
  });

  it("a code issued for another sign-in's PKCE verifier is refused by the provider", async () => {
    const first = await begin();
    const second = await begin();
    const back = await throughProvider(first.authorize, aPerson(["acme-finance"]));
    // The second sign-in's row, with the first's state: only PKCE tells them apart now.
    const secondRow = await prisma.oidcSignIn.findMany({ orderBy: { createdAt: "desc" }, take: 1 });
    await prisma.oidcSignIn.update({
      where: { id: secondRow[0]!.id },
      data: { state: back.searchParams.get("state")! },
    });
    const { res, reason } = await finish(back, second.handle);
    expect(res.status).toBe(400);
    expect(reason).toBe("token_refused");
  });

  it("a person who cancels at the provider is told so", async () => {
    const { authorize, handle } = await begin();
    const { res, reason, text } = await finish(
      await throughProvider(authorize, aPerson(["acme-finance"]), { cancel: true }),
      handle,
    );
    expect(res.status).toBe(403);
    expect(reason).toBe("provider_refused");
    expect(text).toContain("End-User aborted interaction");
  });

  it("joins an existing password user only when the provider has verified the email", async () => {
    const unverified = aPerson(["tally-admins"], { emailVerified: false });
    const carol = aPerson(["tally-admins"]);
    for (const login of [unverified, carol])
      await createUser(
        { email: `${login}@sso.test`, role: "ops", tenants: [acme.slug], password: "a long enough password 1" },
        SYSTEM_ACTOR,
      );
    const refused = await signInAs(unverified);
    expect(refused.res.status).toBe(409);
    expect(refused.reason).toBe("email_taken");
    expect(await userOf(unverified)).toMatchObject({ role: "ops", oidcSubject: null });
    const { res } = await signInAs(carol);
    expect(res.status).toBe(303);
    const user = (await userOf(carol))!;
    expect(user).toMatchObject({ role: "admin", oidcSubject: carol });
    const actions = (await prisma.auditLog.findMany({ where: { subjectId: user.id }, orderBy: { id: "asc" } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual([
      "user.create",
      "user.sso_link",
      "user.profile_change",
      "user.role_change",
      "user.tenants_change",
      "user.sign_in",
    ]);
  });

  it("an unreachable provider is a 502 page, not a 500", async () => {
    configure({ TALLY_OIDC_ISSUER: "http://127.0.0.1:9/" });
    const res = await start(new Request(`${TALLY}/api/auth/oidc/start`));
    expect(res.status).toBe(502);
    expect(res.headers.get("x-tally-refusal")).toBe("provider_unavailable");
  });

  it("is a 404 page where single sign-on is not configured", async () => {
    vi.unstubAllEnvs();
    resetConfigForTests();
    const res = await start(new Request(`${TALLY}/api/auth/oidc/start`));
    expect(res.status).toBe(404);
    expect(res.headers.get("x-tally-refusal")).toBe("sso_off");
  });
});
