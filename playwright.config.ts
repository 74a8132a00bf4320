// End-to-end tests against the real product: `tsx workers/start.ts` (embedded
// PostgreSQL, migrations, demo data, next start, worker) on free ports with a
// fresh data folder, driven by Debian's Chromium.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

function freePort(): number {
  const script =
    "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})";
  return Number(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }).trim());
}

// Set once in the runner; worker processes inherit them, so every process agrees.
if (!process.env.TALLY_E2E_DIR) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tally-e2e-"));
  // As root the embedded server runs as `postgres`, which must enter the folder.
  chmodSync(dir, 0o755);
  process.env.TALLY_E2E_DIR = dir;
  // The runner made it, so the runner removes it (database folder and all, ~90 MB) when it
  // exits, whether the run passed, failed or was interrupted: Playwright stops the web
  // server first, and an exit handler runs after every normal or signalled exit it handles.
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  // The specs' own temporary folders (the replay's and scale-out's databases, receipts)
  // go inside it too, so they leave with it: TMPDIR is what os.tmpdir() reads.
  const tmp = path.join(dir, "tmp");
  mkdirSync(tmp, { mode: 0o755 });
  process.env.TMPDIR = tmp;
  process.env.TALLY_E2E_PORT = String(freePort());
  process.env.TALLY_E2E_PG_PORT = String(freePort());
  process.env.TALLY_E2E_SIM_PORT = String(freePort());
  // The replay spec plays PayPal too; its certificate is served by the replay on
  // this loopback port, which the product under test is told to trust.
  process.env.TALLY_E2E_CERT_PREFIX = `http://127.0.0.1:${freePort()}/`;
  // The alerts spec's SMTP server listens here; the product's email alert channels send to it.
  process.env.TALLY_E2E_SMTP_PORT = String(freePort());
  // The identity provider single sign-on goes through (dev/oidc/provider.ts, a real oidc-provider).
  process.env.TALLY_E2E_OIDC_PORT = String(freePort());
}
// The product's own embedded database, not whatever DATABASE_URL points at.
delete process.env.DATABASE_URL;

const port = process.env.TALLY_E2E_PORT!;
const oidcIssuer = `http://127.0.0.1:${process.env.TALLY_E2E_OIDC_PORT}`;

export default defineConfig({
  testDir: "e2e",
  outputDir: "e2e/.artifacts/test-results",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: `http://localhost:${port}`,
    screenshot: "on",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update"],
    },
    headless: true,
    viewport: { width: 1280, height: 800 },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: [
    {
      // Started first: Tally discovers it on the first single sign-on, not at start.
      command: `${path.join("node_modules", ".bin", "tsx")} dev/oidc/provider.ts`,
      url: `${oidcIssuer}/.well-known/openid-configuration`,
      timeout: 60_000,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
      env: { TALLY_E2E_OIDC_PORT: process.env.TALLY_E2E_OIDC_PORT!, TALLY_E2E_PORT: port },
    },
    {
      command: `${path.join("node_modules", ".bin", "tsx")} workers/start.ts`,
      url: `http://localhost:${port}/api/health`,
      // The first start builds the app: over 5 minutes on 2 cores shared with other builds.
      timeout: 600_000,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
      env: {
        TALLY_DATA_DIR: path.join(process.env.TALLY_E2E_DIR!, "pg"),
        TALLY_PG_PORT: process.env.TALLY_E2E_PG_PORT!,
        TALLY_DEMO_SIM_PORT: process.env.TALLY_E2E_SIM_PORT!,
        TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: process.env.TALLY_E2E_CERT_PREFIX!,
        TALLY_ALLOW_INSECURE_SIMULATORS: "1",
        // The overview's short ack window, shortened so e2e can watch the start-up burst leave it.
        TALLY_ACK_RECENT_WINDOW_MS: "60000",
        PORT: port,
        NEXT_TELEMETRY_DISABLED: "1",
        // Alerts: mail to the alerts spec's SMTP server, rules evaluated every second, links back here.
        TALLY_ALERT_SMTP_URL: `smtp://127.0.0.1:${process.env.TALLY_E2E_SMTP_PORT}`,
        TALLY_ALERT_INTERVAL_MS: "1000",
        TALLY_PUBLIC_URL: `http://localhost:${port}`,
        // Single sign-on through the provider above, with the demo tenant's groups (e2e/sso.spec.ts).
        TALLY_OIDC_ISSUER: oidcIssuer,
        TALLY_OIDC_CLIENT_ID: "tally",
        TALLY_OIDC_CLIENT_SECRET: "tally-test-client-secret-0123456789",
        TALLY_OIDC_REDIRECT_BASE_URL: `http://localhost:${port}`,
        TALLY_OIDC_NAME: "Test IdP",
        TALLY_OIDC_SCOPES: "openid email profile groups",
        TALLY_OIDC_ROLE_MAP: "tally-admins=*:admin, acme-finance=demo:accountant, acme-ops=demo:ops",
      },
    },
  ],
});
