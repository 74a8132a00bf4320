// Every tunable Tally reads from the environment, with its default, validated once.
// Nothing else reads process.env: a typo in a variable name fails here, loudly.
import { parseNetworks } from "@/lib/platform/outbound";
import { isIP } from "node:net";
import { z } from "zod";
import { parseRoleMap } from "@/lib/auth/oidc/role-map";
import { parseCaseSlaDays } from "@/lib/cases/sla-days";

const int = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** "5s,5m,30m,2h" → [5000, 300000, 1800000, 7200000]; each step a whole number with ms, s, m, h or d. */
export function parseDurations(text: string): number[] | string {
  const steps = text.split(",").map((s) => s.trim());
  const out: number[] = [];
  for (const step of steps) {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(step);
    if (!m) return `"${step}" is not a duration: write a whole number followed by ms, s, m, h or d (e.g. 5s,5m,30m,2h)`;
    out.push(Number(m[1]) * UNIT_MS[m[2]!]!);
  }
  return out;
}

const durations = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const r = parseDurations(text);
      if (typeof r === "string") {
        ctx.addIssue({ code: "custom", message: r });
        return z.NEVER;
      }
      return r;
    });
const flag = z
  .enum(["0", "1", "true", "false", ""])
  .default("0")
  .transform((v) => v === "1" || v === "true");

/** Comma-separated http(s) URL prefixes, without credentials, query or fragment; normalised. */
const urlPrefixes = z
  .string()
  .default("")
  .transform((v, ctx) => {
    const prefixes: string[] = [];
    for (const text of v
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        ctx.addIssue({ code: "custom", message: `"${text}" is not a URL` });
        continue;
      }
      if (url.protocol !== "http:" && url.protocol !== "https:")
        ctx.addIssue({ code: "custom", message: `"${text}" must be http or https` });
      else if (url.username || url.password || url.search || url.hash)
        ctx.addIssue({ code: "custom", message: `"${text}" must not carry credentials, a query or a fragment` });
      else prefixes.push(url.href);
    }
    return prefixes;
  });

/** Unset and empty are the same: an ops template often writes VAR= for "not used". */
const optionalText = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
  z.string().optional(),
);

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

const schema = z
  .object({
    DATABASE_URL: z.string().url().optional(),
    /// Embedded PostgreSQL (used when DATABASE_URL is unset).
    TALLY_PG_PORT: int(54329),
    TALLY_DATA_DIR: z.string().optional(),

    /// Ingest.
    TALLY_MAX_BODY_BYTES: int(1024 * 1024),
    TALLY_SECRET_CACHE_TTL_MS: int(30_000),
    /// Most tenant/provider pairs the web process keeps cached (least recently used go first):
    /// unknown slugs are cached briefly too, and whoever sends them chooses how many.
    TALLY_ENDPOINT_CACHE_MAX: z.coerce.number().int().positive().default(10_000),
    /// Refused deliveries kept (lib/pipeline/refused.ts): at most this many per endpoint per minute
    /// and per day, per web process (0 keeps none), their first this-many body bytes, for this many days.
    TALLY_REFUSED_KEEP_PER_MINUTE: int(60),
    TALLY_REFUSED_KEEP_PER_DAY: int(2000),
    TALLY_REFUSED_BODY_KEEP_BYTES: int(16 * 1024),
    TALLY_REFUSED_RETENTION_DAYS: z.coerce.number().int().min(1).default(14),
    TALLY_DB_POOL_SIZE: int(20),

    /// Secrets at rest (webhook signing secrets, provider API keys): AES-256-GCM under this
    /// key, 32 bytes as base64 or hex. Unset with the embedded database: a key kept in
    /// .tally/encryption.key (mode 0600). TALLY_ENCRYPTION_KEYS: older keys, comma-separated,
    /// still accepted for reading while `tally secrets rotate-key` re-encrypts under the current one.
    TALLY_ENCRYPTION_KEY: z.string().optional(),
    TALLY_ENCRYPTION_KEYS: z.string().default(""),

    /// Worker.
    TALLY_WORKER_POLL_MS: int(1000),
    /// Events taken per pick-up, committed in one transaction. bench:worker, 20,000 queued, one
    /// replica: 25 → 852 movements/s, 100 → 1,470, 250 → ~1,700–2,000 (per-batch statements amortised).
    TALLY_WORKER_BATCH: int(250),
    /// Pick-up loops per worker process, each as a replica would (SKIP LOCKED): while one loop's
    /// backend works, another parses and builds its batch. bench:worker, 20,000 queued, batches of
    /// 250: 1 loop ~1,730 movements/s, 2 loops ~2,300, 3 ~3,070 (taking more CPU from the web process).
    TALLY_WORKER_LOOPS: z.coerce.number().int().min(1).max(16).default(2),
    /// Post plain movements (payments, payouts, fees, adjustments alone in their event, of a
    /// provider not asked to confirm them) in the pick-up's transaction, with their claim
    /// (lib/pipeline/commit.ts, commitInPickUp). 0: every claim goes through the commit step.
    TALLY_WORKER_COMMIT_IN_PICKUP: z
      .enum(["0", "1", "true", "false"])
      .default("1")
      .transform((v) => v === "1" || v === "true"),
    /// Claims of a batch prepared side by side (parsed again, confirmed with the provider) before their one transaction.
    TALLY_WORKER_COMMIT_CONCURRENCY: int(4),
    /// The acknowledgement wins the CPU (lib/pipeline/ack-pressure.ts): the worker's scheduling
    /// priority (nice, 0–19; its PostgreSQL backends' too where the server is this user's on this
    /// machine), and whether it backs off while the web process reports acks over TALLY_ACK_SLO_MS.
    TALLY_WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
    TALLY_WORKER_ACK_YIELD: z
      .enum(["0", "1", "true", "false"])
      .default("1")
      .transform((v) => v === "1" || v === "true"),
    TALLY_SWEEP_INTERVAL_MS: int(120_000),
    TALLY_STALE_CLAIM_MS: int(300_000),
    TALLY_MAX_ATTEMPTS: int(10),
    /// Cap on the back-off of a deferred claim (a refund waiting for its payment).
    TALLY_RETRY_MAX_BACKOFF_MS: int(60_000),
    TALLY_WAIT_RECHECK_MS: int(300_000),
    TALLY_WORKER_METRICS_PORT: int(0),
    /** Set: GET /api/metrics asks for `Authorization: Bearer <this>` (401 otherwise). Unset or empty: it stays open. */
    TALLY_METRICS_TOKEN: z.preprocess(
      (v) => (v === "" ? undefined : v),
      z.string().min(16, "must be at least 16 characters (it guards the metrics endpoint)").optional(),
    ),

    /// Outbox dispatcher.
    TALLY_OUTBOX_POLL_MS: int(1000),
    /// Receipts leased at a time; sends stop at half the lease (outbox.ts). At 20 the receipts of a
    /// 2,800/s drain took twice as long as the drain (bench:worker).
    TALLY_OUTBOX_BATCH: int(100),
    TALLY_OUTBOX_LEASE_MS: int(60_000),
    /// Receipt retries: the wait before each retry after a failed delivery; when the last retry
    /// fails too the receipt is DEAD (listed for ops to redeliver). Svix's schedule by default.
    TALLY_RECEIPT_RETRY_SCHEDULE: durations("5s,5m,30m,2h,5h,10h,10h"),
    /// Set: receipts are POSTed as JSON to this URL (Idempotency-Key header); any 2xx is delivered.
    TALLY_RECEIPT_WEBHOOK_URL: z.string().url().optional(),
    TALLY_RECEIPTS_FILE: z.string().optional(),
    TALLY_SMTP_URL: z.string().optional(),
    TALLY_RECEIPT_FROM: z.string().default("receipts@tally.local"),
    /// Where SMTP receipts go when the payload names no recipient (e.g. a finance mailbox).
    TALLY_RECEIPT_TO: z.string().optional(),

    /// Alerts (lib/alerts/): how often the worker evaluates the rules, the retry schedule of a
    /// notification that failed to arrive (dead when it runs out), the mail server and sender
    /// of email channels (TALLY_SMTP_URL when unset), and the rules' thresholds.
    TALLY_ALERT_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
    TALLY_ALERT_RETRY_SCHEDULE: durations("10s,1m,5m,15m,1h,3h,6h"),
    TALLY_ALERT_SMTP_URL: z.string().optional(),
    TALLY_ALERT_FROM: z.string().default("alerts@tally.local"),
    /// Networks alert webhooks may reach though they are not public (loopback, private,
    /// link-local), comma-separated CIDRs: none by default (lib/platform/outbound.ts).
    TALLY_ALERT_PRIVATE_NETWORKS: z
      .string()
      .default("")
      .superRefine((v, ctx) => {
        try {
          parseNetworks(v);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
        }
      }),
    /// Stuck claims (held past TALLY_STALE_CLAIM_MS, or waiting that long) above this many open the alert.
    TALLY_ALERT_STUCK_CLAIMS: int(0),
    /// More refused deliveries than this from one provider in the last hour open refused_deliveries.
    TALLY_ALERT_REFUSED_PER_HOUR: int(5),
    /// A provider's discrepancy trend is judged once it has this many reconciled days.
    TALLY_ALERT_TREND_MIN_DAYS: z.coerce.number().int().positive().default(3),
    /// The web process opens the ack-latency alert once the p99 over TALLY_ACK_RECENT_WINDOW_MS has been
    /// over TALLY_ACK_SLO_MS for this many minutes in a row.
    TALLY_ALERT_ACK_MINUTES: int(5),
    /// The daily reconciliation "did not run" once this long has passed its scheduled time without a run.
    TALLY_ALERT_RECON_GRACE_MS: int(2 * 3600_000),
    /// Where people reach the dashboard (scheme://host[:port], no path): the links in notifications.
    TALLY_PUBLIC_URL: z
      .string()
      .url()
      .default("http://localhost:3000")
      .transform((v) => v.replace(/\/+$/, "")),

    /// Reconciliation.
    TALLY_RECON_LOOKBACK_DAYS: int(3),
    /// Ours-not-theirs this close to a window edge is flagged "possible timing" and re-checked next run.
    TALLY_RECON_TIMING_MARGIN_MS: int(6 * 3600_000),
    /// Daily scheduled run, UTC "HH:MM"; "off" disables it.
    TALLY_RECON_SCHEDULE: z
      .string()
      .regex(/^(off|\d{2}:\d{2})$/, 'must be "HH:MM" (UTC) or "off"')
      .default("02:00"),
    /// Gap check: how often to ask each provider that can say so for the events it failed to
    /// deliver (0 turns it off), and how far back the first check of an endpoint looks.
    TALLY_GAP_CHECK_INTERVAL_MS: int(3600_000),
    TALLY_GAP_CHECK_LOOKBACK_MS: int(3 * 86_400_000),
    /// raw_events maintenance: how often the worker makes partitions ahead and removes raw
    /// bodies past each tenant's retention (0 turns it off), and how many months ahead.
    TALLY_MAINTENANCE_INTERVAL_MS: int(3600_000),
    TALLY_RAW_EVENT_MONTHS_AHEAD: z.coerce.number().int().min(1).max(24).default(3),
    /// Webhook-silence alert: fewer deliveries than this share of settled lines.
    TALLY_SILENCE_RATIO: z.coerce.number().min(0).max(1).default(0.2),
    TALLY_SILENCE_MIN_LINES: int(10),
    /// Largest settlement report accepted by the dashboard's upload (bytes); the body is streamed to a temp file.
    TALLY_RECON_UPLOAD_MAX_BYTES: int(512 * 1024 * 1024),

    /// Overview: the acknowledgement-latency objective (p99, milliseconds) the figure is
    /// coloured against, and the short rolling window it is shown over (the other is 24 h).
    TALLY_ACK_SLO_MS: int(50),
    TALLY_ACK_RECENT_WINDOW_MS: int(15 * 60_000),

    /// Cases (four-eyes). A proposal whose amount at stake is above this (minor units,
    /// of the case's own currency) needs two different approvers besides the proposer.
    TALLY_CASE_SECOND_APPROVAL_ABOVE: int(100_000),
    /// Days to resolve a case, per kind ("KIND=DAYS,…"; kinds not named keep their default):
    /// a case is due this long after it opened (lib/cases/sla.ts).
    TALLY_CASE_SLA_DAYS: z
      .string()
      .default("")
      .transform((v, ctx) => {
        const r = parseCaseSlaDays(v);
        if (typeof r === "string") {
          ctx.addIssue({ code: "custom", message: r });
          return z.NEVER;
        }
        return r;
      }),

    /// Fault hooks, for tests and benchmarks only. They make the worker slow,
    /// stop it at a chosen point to be killed, or disable the claim to prove the tests notice.
    TALLY_FAULT_WORKER_DELAY_MS: int(0),
    /// Stops the worker (logs "fault.paused", then hangs) at a point, for a test to SIGKILL it there.
    TALLY_FAULT_PAUSE_AT: z.enum(["", "after-ledger-write", "after-claim"]).default(""),
    TALLY_FAULT_DISABLE_CLAIM: flag,

    /// Dashboard sign-in. A session ends after this long without a request (idle)
    /// and, whatever the activity, this long after sign-in (absolute).
    TALLY_SESSION_IDLE_MINUTES: int(60),
    TALLY_SESSION_ABSOLUTE_HOURS: int(12),
    /// Session cookie's Secure attribute. auto: Secure, except for plain-http
    /// requests to a loopback host (localhost, 127.0.0.1, [::1]) so local use
    /// works; always: Secure everywhere; never: only for plain http on a
    /// private network, at your own risk (the cookie can then be sniffed).
    TALLY_COOKIE_SECURE: z.enum(["auto", "always", "never"]).default("auto"),
    /// Extra origins (scheme://host[:port]) allowed to send cookie-authenticated
    /// state changes, beside the request's own Host; comma-separated.
    TALLY_TRUSTED_ORIGINS: z.string().default(""),
    /// Sign-in brakes. Per account and address (or per account and known device):
    /// after this many failures each further attempt waits twice as long as the
    /// last, from 2 s up to the cap; nobody else is locked out. Per address, across
    /// all accounts: at most this many failures per window (looser, because an
    /// office or a NAT shares one address). 0 turns the per-address limit off.
    TALLY_LOGIN_WINDOW_MINUTES: int(15),
    TALLY_LOGIN_FREE_FAILURES: int(5),
    TALLY_LOGIN_BACKOFF_MAX_SECONDS: int(900),
    TALLY_LOGIN_MAX_FAILURES_PER_IP: int(20),
    /// Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDR
    /// ranges, IPv4 or IPv6). Empty: the connection's own peer is the client, and
    /// X-Forwarded-For is ignored, since anyone can write it.
    TALLY_TRUSTED_PROXIES: z
      .string()
      .default("")
      .superRefine((v, ctx) => {
        for (const entry of v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)) {
          const [address, bits, extra] = entry.split("/");
          const family = isIP(address!.replace(/^::ffff:(?=\d)/i, ""));
          const max = family === 6 ? 128 : 32;
          const badBits = bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max);
          if (family === 0 || badBits || extra !== undefined)
            ctx.addIssue({ code: "custom", message: `"${entry}" is not an IP address or CIDR range` });
        }
      }),

    /// Single sign-on (OpenID Connect), off unless TALLY_OIDC_ISSUER is set; then the client id,
    /// secret, redirect base URL and role map are required too. The redirect URI to register
    /// at the provider is <TALLY_OIDC_REDIRECT_BASE_URL>/api/auth/oidc/callback. An http issuer
    /// is accepted only on a loopback host (a provider started by tests), and under
    /// NODE_ENV=production only with TALLY_ALLOW_INSECURE_SIMULATORS=1 as well.
    TALLY_OIDC_ISSUER: optionalText.pipe(z.string().url().optional()),
    TALLY_OIDC_CLIENT_ID: optionalText,
    TALLY_OIDC_CLIENT_SECRET: optionalText,
    TALLY_OIDC_REDIRECT_BASE_URL: optionalText.pipe(z.string().url().optional()),
    /// Shown on the sign-in page as "Sign in with <name>".
    TALLY_OIDC_NAME: z.string().trim().min(1).default("single sign-on"),
    TALLY_OIDC_SCOPES: z.string().trim().min(1).default("openid email profile"),
    /// The ID token claim holding the person's groups (a string or a list of strings); a
    /// dotted path reaches into objects (Keycloak's "realm_access.roles").
    TALLY_OIDC_GROUPS_CLAIM: z.string().trim().min(1).default("groups"),
    /// group=tenant:role, comma- or newline-separated (tally-admins=*:admin, acme-ops=acme:ops),
    /// or JSON {"group": "tenant:role" | ["tenant:role", ...]}. See lib/auth/oidc/role-map.ts.
    TALLY_OIDC_ROLE_MAP: optionalText.transform((v, ctx) => {
      if (v === undefined) return undefined;
      const r = parseRoleMap(v);
      if (typeof r === "string") {
        ctx.addIssue({ code: "custom", message: r });
        return z.NEVER;
      }
      return r;
    }),

    /// PayPal signing certificates are fetched only from PayPal's hosts over https. For
    /// provider simulators and tests only (npm run replay, npm run provider-sim): more URL
    /// prefixes, comma-separated (e.g. "http://127.0.0.1:4011/"), whose certificates are
    /// trusted as PayPal's. A URL qualifies with the prefix's scheme, host and port, its
    /// path below the prefix's, and no credentials. Whoever can serve a file under such a
    /// prefix can forge PayPal webhooks for every tenant, so under NODE_ENV=production
    /// (which `next start`, hence `npm start`, always is) it is refused unless
    /// TALLY_ALLOW_INSECURE_SIMULATORS=1 says so as well. Empty (the default): PayPal only.
    TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: urlPrefixes,
    /// The second key to the line above in production: "1" lets a production process trust
    /// a simulator's certificates. Never set it where real money arrives.
    TALLY_ALLOW_INSECURE_SIMULATORS: flag,

    /// Web app port for `npm start`.
    PORT: int(3000),
    /// How long the web process keeps an idle keep-alive connection open. Node's default is
    /// 5 s; a client or balancer that reuses a connection the server is closing at that
    /// moment gets a reset (ECONNRESET, or a balancer's 502). Longer than the idle timeouts
    /// of what usually sits in front (AWS ALB 60 s, HAProxy here 30 s) so the client closes first.
    TALLY_HTTP_KEEP_ALIVE_MS: z.coerce.number().int().positive().default(65_000),
    /// `npm start`'s live demo: a provider simulator playing Stripe for the demo tenant on
    /// this port, a day of deliveries through it and a reconciliation run. "0" turns it off.
    TALLY_DEMO_SIMULATOR: z
      .enum(["0", "1", "true", "false"])
      .default("1")
      .transform((v) => v === "1" || v === "true"),
    TALLY_DEMO_SIM_PORT: int(4010),

    NODE_ENV: z.string().default("development"),
  })
  .superRefine((c, ctx) => {
    const oidcNeeds = {
      TALLY_OIDC_ISSUER: c.TALLY_OIDC_ISSUER,
      TALLY_OIDC_CLIENT_ID: c.TALLY_OIDC_CLIENT_ID,
      TALLY_OIDC_CLIENT_SECRET: c.TALLY_OIDC_CLIENT_SECRET,
      TALLY_OIDC_REDIRECT_BASE_URL: c.TALLY_OIDC_REDIRECT_BASE_URL,
      TALLY_OIDC_ROLE_MAP: c.TALLY_OIDC_ROLE_MAP,
    };
    const set = Object.entries(oidcNeeds).filter(([, v]) => v !== undefined);
    if (set.length > 0) {
      for (const [name, v] of Object.entries(oidcNeeds))
        if (v === undefined)
          ctx.addIssue({
            code: "custom",
            path: [name],
            message: `is required for single sign-on (${set.map(([n]) => n).join(", ")} ${set.length > 1 ? "are" : "is"} set)`,
          });
    }
    if (c.TALLY_OIDC_ISSUER) {
      const issuer = new URL(c.TALLY_OIDC_ISSUER);
      if (issuer.protocol !== "https:" && issuer.protocol !== "http:")
        ctx.addIssue({ code: "custom", path: ["TALLY_OIDC_ISSUER"], message: "must be an https URL" });
      else if (issuer.protocol === "http:" && !LOOPBACK_HOST.test(issuer.hostname))
        ctx.addIssue({
          code: "custom",
          path: ["TALLY_OIDC_ISSUER"],
          message: "must be https: tokens and the sign-in itself would cross the network in the clear",
        });
      else if (issuer.protocol === "http:" && c.NODE_ENV === "production" && !c.TALLY_ALLOW_INSECURE_SIMULATORS)
        ctx.addIssue({
          code: "custom",
          path: ["TALLY_OIDC_ISSUER"],
          message:
            "is plain http, refused with NODE_ENV=production unless TALLY_ALLOW_INSECURE_SIMULATORS=1 (test providers only)",
        });
    }
    if (c.TALLY_OIDC_REDIRECT_BASE_URL) {
      const base = new URL(c.TALLY_OIDC_REDIRECT_BASE_URL);
      if ((base.protocol !== "https:" && base.protocol !== "http:") || base.search || base.hash || base.username)
        ctx.addIssue({
          code: "custom",
          path: ["TALLY_OIDC_REDIRECT_BASE_URL"],
          message: "must be Tally's public http(s) address, without credentials, query or fragment",
        });
    }
    if (
      c.TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES.length > 0 &&
      c.NODE_ENV === "production" &&
      !c.TALLY_ALLOW_INSECURE_SIMULATORS
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES"],
        message:
          "trusts certificates from outside PayPal, which lets whoever serves them forge PayPal webhooks; refused with NODE_ENV=production unless TALLY_ALLOW_INSECURE_SIMULATORS=1 (simulators and tests only)",
      });
    }
  });

export type Config = z.infer<typeof schema>;

let cached: Config | undefined;

/**
 * Fault hooks can disable the claim, i.e. idempotency itself, so a production
 * process refuses every TALLY_FAULT_* variable that is set, even to "0" and even
 * one this schema does not know: a misspelt or future hook is refused too, and a
 * deployment that carries one is told which to remove.
 */
function faultFlagsIn(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((k) => k.startsWith("TALLY_FAULT_") && (env[k] ?? "") !== "")
    .sort();
}

/** The validated configuration; throws naming every bad variable. */
export function config(): Config {
  if (cached) return cached;
  const parsed = schema.safeParse(process.env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  if ((process.env.NODE_ENV ?? "development") === "production") {
    for (const name of faultFlagsIn(process.env))
      problems.push(`${name}: fault hooks for tests and benchmarks are refused with NODE_ENV=production; unset it`);
  }
  if (!parsed.success || problems.length > 0) {
    throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  }
  cached = parsed.data;
  return cached;
}

/** Tests change the environment between cases; this forgets the cached read. */
export function resetConfigForTests(): void {
  cached = undefined;
}
