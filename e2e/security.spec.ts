// Browser defences (#17 items 6–8): security headers and the CSP against framing
// and injected scripts, ?next= that leaves the origin, and the sign-in brakes
// against a client that rotates X-Forwarded-For.
import { expect, request as playwrightRequest, test, type Page } from "@playwright/test";
import { baseURL, demo, demoUser, signInApi, signInPage, unique } from "./support";

/** CSP violations the page reports, collected from the first script on. */
async function recordViolations(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  return () => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
}

test("pages carry a nonce CSP, frame-ancestors 'none', nosniff and a referrer policy; HSTS only where cookies are Secure", async ({
  request,
}) => {
  const first = await request.get("/login");
  const second = await request.get("/login");
  const csp = first.headers()["content-security-policy"]!;
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}' 'strict-dynamic'/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(csp).toContain("base-uri 'none'");
  expect(csp).not.toContain("'unsafe-eval'");
  // A fresh nonce per response, and it is the one on the page's own scripts.
  const nonceOf = (policy: string) => /'nonce-([^']+)'/.exec(policy)![1]!;
  expect(nonceOf(second.headers()["content-security-policy"]!)).not.toBe(nonceOf(csp));
  expect(await first.text()).toContain(`nonce="${nonceOf(csp)}"`);
  expect(first.headers()).toMatchObject({
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
  });
  // Plain http on localhost: the cookie is not Secure, so no HSTS (it would be ignored, or lock a developer out).
  expect(first.headers()["strict-transport-security"]).toBeUndefined();
  const viaHttps = await request.get("/login", { headers: { "x-forwarded-proto": "https" } });
  expect(viaHttps.headers()["strict-transport-security"]).toBe("max-age=31536000");
  // The JSON API gets them too.
  expect((await request.get("/api/health")).headers()["x-content-type-options"]).toBe("nosniff");
});

test("a page framed by another origin is refused", async ({ page }) => {
  // Another origin frames the sign-in page. It is served on loopback too (127.0.0.1, where
  // Tally is localhost): a public origin framing a local one is refused by Chromium's
  // private-network rules whatever Tally says, and would prove nothing.
  const evil = `http://127.0.0.1:${new URL(baseURL()).port}/evil-frame`;
  await page.route(evil, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<h1>evil</h1><iframe id="victim" src="${baseURL()}/login" width="800" height="600"></iframe>`,
    }),
  );
  await page.goto(evil);
  // Chromium replaces a document it refuses to frame with its error page. (Seen: this
  // Chromium refused the frame even from a build without frame-ancestors and
  // X-Frame-Options, so the header assertions above are what catch their removal.)
  const frame = page.frames().find((f) => f !== page.mainFrame())!;
  await expect.poll(() => frame.url(), { timeout: 30_000 }).toBe("chrome-error://chromewebdata/");
  await expect(page.frameLocator("#victim").getByRole("heading", { name: "Sign in to Tally" })).toHaveCount(0);
});

test("an injected inline script does not run, not even with an earlier page's nonce; the page's own scripts do", async ({
  page,
  request,
}) => {
  const earlier = /'nonce-([^']+)'/.exec((await request.get("/login")).headers()["content-security-policy"]!)![1]!;
  const violations = await recordViolations(page);
  // A stored-XSS stand-in: the real page, with script an attacker got into its HTML.
  await page.route(`${baseURL()}/login`, async (route) => {
    const response = await route.fetch();
    const html = (await response.text()).replace(
      "<body>",
      `<body><script>window.__injected = "plain"</script><script nonce="${earlier}">window.__replayed = "old nonce"</script><img src="x" onerror="window.__handler = 1">`,
    );
    await route.fulfill({ response, body: html });
  });
  await page.goto("/login");
  // Hydrated: the button is enabled only once React's (nonce-carrying) scripts ran.
  await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
  expect(
    await page.evaluate(() => [(window as any).__injected, (window as any).__replayed, (window as any).__handler]),
  ).toEqual([undefined, undefined, undefined]);
  expect((await violations()).filter((v) => v.startsWith("script-src")).length).toBeGreaterThanOrEqual(2);
});

test("the overview's chart and styles work under the policy, with no violation reported", async ({ page }) => {
  const violations = await recordViolations(page);
  await signInPage(page, demoUser("accountant"));
  await page.goto(`/t/${demo().tenant}`);
  await expect(page.locator(".recharts-surface").first()).toBeVisible();
  expect(await violations()).toEqual([]);
});

for (const next of ["/%5Cevil.test/phish", "/%09/evil.test", "%2F%2Fevil.test"]) {
  test(`sign-in with ?next=${next} stays on this origin`, async ({ page }) => {
    await page.goto(`/login?next=${next}`);
    await page.getByLabel("Email").fill(demoUser("ops").email);
    await page.getByLabel("Password").fill(demoUser("ops").password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByTestId("signed-in-user")).toBeVisible();
    expect(new URL(page.url()).origin).toBe(baseURL());
  });
}

test("rotating X-Forwarded-For does not escape the back-off, which a known device still passes", async () => {
  const admin = await signInApi(demoUser("admin"));
  const created = await admin.call("POST", "/api/v1/users", {
    email: `${unique("backoff")}@demo.tally`,
    role: "ops",
    tenants: [demo().tenant],
  });
  expect(created.status).toBe(201);
  const user = created.json as { user: { email: string }; password: string };
  const login = (
    api: Awaited<ReturnType<typeof playwrightRequest.newContext>>,
    password: string,
    headers: Record<string, string> = {},
  ) => api.post("/api/auth/login", { data: { email: user.user.email, password }, headers });

  // The user's own browser signs in once: it is now a known device.
  const own = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
  expect((await login(own, user.password)).status()).toBe(200);

  // A guesser at the same address, claiming a new address on every attempt.
  const guesser = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
  for (let i = 0; i < 5; i++)
    expect((await login(guesser, `guess-${i}-wrong`, { "x-forwarded-for": `203.0.113.${i + 1}` })).status()).toBe(401);
  const refused = await login(guesser, "guess-6-wrong", { "x-forwarded-for": "198.51.100.77" });
  expect(refused.status()).toBe(429);
  expect(Number(refused.headers()["retry-after"])).toBeGreaterThan(0);
  // Not a lockout: the right password from the known device passes at once.
  expect((await login(own, user.password)).status()).toBe(200);
  await Promise.all([own.dispose(), guesser.dispose(), admin.api.dispose()]);
});
