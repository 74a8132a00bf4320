// "The test that proves it works": replay a day of deliveries several times, in
// a fresh random order each time, at high concurrency over real HTTP, while a
// supervisor SIGKILLs and restarts the workers at random. Each run starts from an
// empty ledger (its own tenants), so every run must reach the day's truth on its
// own rather than absorb the run before it as duplicates. After every run the
// ledger must be identical to the first run's and to the day's truth, every
// posting must have at least one receipt delivered (at least once: how many per
// posting is reported), no claim may be left unfinished, and the ledger's
// invariants must hold. A day with planted defects (dev/simulator/defects.ts) must
// also come to each defect's expected outcome in every run: so many conflicts,
// held refunds and failed events, and the ledger each implies. Every provider of the day
// is played: Adyen's batches signed item by item, PayPal's deliveries signed with
// a local certificate the product must be told to trust (TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES),
// Flutterwave's payments confirmed by the workers against a local verify API.
import { open, openSettings } from "@/lib/platform/secrets-at-rest";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { config } from "@/lib/platform/config";
import { Prisma, prisma } from "@/lib/platform/db";
import { exportLedger } from "@/lib/ledger/export";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { carriedMovements, type Delivery } from "@/dev/simulator/day";
import type { Defect } from "@/dev/simulator/defects";
import type { ExportedPosting, LedgerExport } from "@/lib/ledger/export";
import { readDayFile, type DayHeader } from "@/dev/simulator/day-file";
import { FlutterwaveAccounts } from "@/dev/simulator/flutterwave-api";
import { PaypalAccounts } from "@/dev/simulator/paypal-api";
import { localCertificatePrefix, startLocalProviderApis, type LocalProviderApis } from "@/dev/simulator/local-apis";
import type { PaypalSigning } from "@/dev/simulator/paypal-certificate";
import { seeded } from "@/lib/providers/simulation/random";
import type { SimProvider } from "@/lib/providers/simulation/script";
import { signedDelivery, type TenantSecrets } from "@/dev/simulator/sign";
import { addSecret, createTenant, generateSecret, updateEndpointSettings } from "@/lib/admin/tenants";

export type ReplayOptions = {
  file: string;
  /** Base URL of the running product, e.g. http://localhost:3000. */
  target: string;
  runs: number;
  /** SIGKILL a random worker every [min, max] ms; null: no kills. */
  killEvery: [number, number] | null;
  workers: number;
  concurrency: number;
  seed: number;
  /** Tenants are created as <prefix>-<slug from the file>, so replays never mix with other data. */
  tenantPrefix: string;
  /** Extra environment for the workers (fault hooks, e.g. TALLY_FAULT_DISABLE_CLAIM=1). */
  workerEnv?: Record<string, string>;
  drainTimeoutMs: number;
  log: (line: string) => void;
};

export type RunReport = {
  run: number;
  sent: number;
  accepted: number;
  /** 401s for the deliveries the day signed badly on purpose (the provider's retry follows). */
  rejected: number;
  unexpected: Record<string, number>;
  duplicatesAbsorbed: number;
  kills: number;
  sweeps: number;
  reclaims: number;
  sendMs: number;
  drainMs: number;
  postings: number;
  /** Postings whose receipt was delivered at least once. */
  receiptsDistinct: number;
  /** Deliveries the replay's workers made (each receipt at least once; more after a kill between send and record). */
  receiptDeliveries: number;
  /** How many postings had their receipt delivered n times, by n (from the replay's workers' file). */
  receiptsPerPosting: Record<string, number>;
  /** claim_conflicts rows of a retry with other money (DIFFERENT_RETRY), raw events left CONFLICT. */
  conflicts: number;
  conflictEvents: number;
  /** Claims HELD (over-refunds) and their claim_conflicts rows (OVER_REFUND). */
  held: number;
  overRefunds: number;
  /** Raw events the parser refused (malformed bodies and bad money). */
  failed: number;
  /** sha256 of the ledger without the postings whose identity depends on arrival order (see fingerprint). */
  snapshotSha256: string;
  problems: string[];
};

export type ReplayResult = { runs: RunReport[]; ok: boolean; differences: string[] };

type TenantInfo = {
  slug: string;
  id: string;
  secrets: TenantSecrets;
  /** Flutterwave's API secret key, which the local verify API checks. */
  flutterwaveKey?: string;
  /** PayPal's REST app credentials, which the local token API checks. */
  paypalApp?: { clientId: string; clientSecret: string };
};

/** Worker intervals shortened so that a killed worker's claims are swept within seconds. */
export const REPLAY_WORKER_ENV: Record<string, string> = {
  TALLY_STALE_CLAIM_MS: "3000",
  TALLY_SWEEP_INTERVAL_MS: "1000",
  TALLY_WORKER_POLL_MS: "200",
  TALLY_OUTBOX_POLL_MS: "200",
  TALLY_OUTBOX_LEASE_MS: "5000",
  TALLY_RETRY_MAX_BACKOFF_MS: "2000",
  TALLY_RECEIPT_RETRY_SCHEDULE: "1s,2s,2s,2s,2s,2s,2s,2s,2s,2s",
  // Random kills hit the same claim more often than real crashes would.
  TALLY_MAX_ATTEMPTS: "25",
  TALLY_RECON_SCHEDULE: "off",
};

/** A secret in the provider's format; Paystack's is its secret key, sk_test_…. */
const newSecret = (provider: SimProvider) =>
  provider === "paystack" ? `sk_test_${generateSecret(provider)}` : generateSecret(provider);

/**
 * The tenant, with an endpoint and an active secret for every provider of the day,
 * and the settings those providers need: PayPal's webhook id and REST app credentials,
 * Flutterwave's API secret key, and the base URL of both APIs (the local provider
 * APIs, a new port each replay unless a certificate prefix fixes it).
 */
async function ensureTenant(slug: string, providers: readonly SimProvider[], providerApi: string): Promise<TenantInfo> {
  if (!(await prisma.tenant.findUnique({ where: { slug } }))) {
    const created = await createTenant({ slug, name: `Replay ${slug}` }, SYSTEM_ACTOR);
    if (!created.ok) throw new Error(created.message);
  }
  const tenant = await prisma.tenant.findUniqueOrThrow({ where: { slug } });
  const secrets: TenantSecrets = {};
  let flutterwaveKey: string | undefined;
  let paypalApp: TenantInfo["paypalApp"];
  for (const provider of providers) {
    const latest = () =>
      prisma.endpointSecret.findFirst({
        where: { endpoint: { tenantId: tenant.id, provider }, revokedAt: null },
        orderBy: { createdAt: "desc" },
      });
    if (!(await latest())) {
      const r = await addSecret(slug, provider, newSecret(provider), { label: "replay" }, SYSTEM_ACTOR);
      if (!r.ok) throw new Error(r.message);
    }
    secrets[provider] = open((await latest())!.secret);
    const settings = openSettings(
      ((
        await prisma.providerEndpoint.findUniqueOrThrow({
          where: { tenantId_provider: { tenantId: tenant.id, provider } },
        })
      ).settings ?? {}) as Record<string, unknown>,
    );
    const change = async (values: Record<string, string>) => {
      const r = await updateEndpointSettings(slug, provider, { settings: values }, SYSTEM_ACTOR);
      if (!r.ok) throw new Error(r.message);
    };
    if (provider === "paypal") {
      // PayPal signs for the webhook's id, not with a secret: the id is what binds a delivery to this endpoint.
      const webhookId =
        typeof settings.webhookId === "string"
          ? settings.webhookId
          : `WH-REPLAY-${generateSecret("paypal").slice(0, 16).toUpperCase()}`;
      secrets.paypal = webhookId;
      // The worker asks PayPal's API (here the local one) for each capture and refund before posting it.
      const clientId =
        typeof settings.clientId === "string"
          ? settings.clientId
          : `AV-REPLAY-${generateSecret("paypal").slice(0, 20)}`;
      const clientSecret =
        typeof settings.clientSecret === "string"
          ? settings.clientSecret
          : `EP-REPLAY-${generateSecret("paypal").slice(0, 24)}`;
      paypalApp = { clientId, clientSecret };
      if (
        settings.webhookId !== webhookId ||
        settings.clientId !== clientId ||
        settings.clientSecret !== clientSecret ||
        settings.apiBaseUrl !== providerApi
      ) {
        await change({ webhookId, clientId, clientSecret, apiBaseUrl: providerApi });
      }
    }
    if (provider === "flutterwave") {
      flutterwaveKey =
        typeof settings.secretKey === "string"
          ? settings.secretKey
          : `FLWSECK_TEST-${generateSecret("flutterwave").slice(0, 32)}-X`;
      await change({ secretKey: flutterwaveKey, apiBaseUrl: providerApi });
    }
  }
  return { slug, id: tenant.id, secrets, flutterwaveKey, paypalApp };
}

/**
 * Worker processes, SIGKILLed at random and restarted at once. Only a worker that
 * has done its first pick-up (is taking work) is a victim: killing one still booting would count
 * a kill that interrupts nothing.
 */
class Supervisor {
  private children = new Set<ChildProcess>();
  private working = new Set<ChildProcess>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  kills = 0;
  sweeps = 0;
  reclaims = 0;

  constructor(
    private readonly o: {
      workers: number;
      env: Record<string, string>;
      killEvery: [number, number] | null;
      random: () => number;
      log: (l: string) => void;
    },
  ) {}

  private launch(): void {
    const child = spawn(process.execPath, ["--import", "tsx", "workers/worker.ts"], {
      env: { ...process.env, ...this.o.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.children.add(child);
    let buffer = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        if (line.includes('"worker.ready"')) this.working.add(child);
        if (line.includes('"sweep.pass"')) this.sweeps++;
        if (line.includes('"sweep.released"')) this.reclaims++;
        if (line.includes('"commit.error"') || line.includes('"worker.crash"'))
          this.o.log(`  worker: ${line.slice(0, 300)}`);
      }
    });
    child.stderr!.on("data", (c: Buffer) => this.o.log(`  worker stderr: ${c.toString().trim().slice(0, 300)}`));
    child.on("exit", () => {
      this.children.delete(child);
      this.working.delete(child);
      if (!this.stopped) this.launch();
    });
  }

  start(): void {
    for (let i = 0; i < this.o.workers; i++) this.launch();
    this.scheduleKill();
  }

  private scheduleKill(): void {
    if (!this.o.killEvery || this.stopped) return;
    const [min, max] = this.o.killEvery;
    this.timer = setTimeout(
      () => {
        const alive = [...this.working];
        const victim = alive[Math.floor(this.o.random() * alive.length)];
        if (victim && victim.exitCode === null) {
          victim.kill("SIGKILL");
          this.kills++;
        }
        this.scheduleKill();
      },
      min + this.o.random() * (max - min),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(
      [...this.children].map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once("exit", () => resolve());
            c.kill("SIGTERM");
            setTimeout(() => c.kill("SIGKILL"), 10_000).unref();
          }),
      ),
    );
  }
}

/** Posts every delivery, as a provider would: retrying network errors and 5xx, giving up on 4xx. */
async function send(
  deliveries: Delivery[],
  tenants: Map<string, TenantInfo>,
  target: string,
  concurrency: number,
  paypal: PaypalSigning,
) {
  const stats = { accepted: 0, rejected: 0, unexpected: {} as Record<string, number> };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < deliveries.length) {
        const d = deliveries[next++]!;
        const tenant = tenants.get(d.tenant)!;
        for (let attempt = 1; ; attempt++) {
          let status: number | string;
          try {
            const signed = signedDelivery(d, tenant.secrets, { paypal });
            const res = await fetch(`${target}/api/webhooks/${tenant.slug}/${d.provider}`, {
              method: "POST",
              headers: signed.headers,
              body: signed.body,
              signal: AbortSignal.timeout(30_000),
            });
            await res.arrayBuffer();
            status = res.status;
          } catch (error) {
            status = (error as Error).name === "TimeoutError" ? "timeout" : "network";
          }
          if (status === 200) stats.accepted++;
          else if (status === 401 && d.signature === "invalid") stats.rejected++;
          else if (typeof status === "string" || status >= 500) {
            // Providers retry for hours; 10 attempts with doubling waits (0.1 s … 5 s, ~25 s in all) outlast a
            // web app being killed and restarted behind a balancer (6 attempts in 1.5 s once got 4 503s there).
            if (attempt < 10) {
              await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** (attempt - 1))));
              continue;
            }
            stats.unexpected[String(status)] = (stats.unexpected[String(status)] ?? 0) + 1;
          } else stats.unexpected[String(status)] = (stats.unexpected[String(status)] ?? 0) + 1;
          break;
        }
      }
    }),
  );
  return stats;
}

/** What the product recorded of the defects: conflicts, held over-refunds, refused events. */
async function defectCounts(tenantIds: string[]) {
  const [row] = await prisma.$queryRaw<
    { conflicts: bigint; conflict_events: bigint; held: bigint; over_refunds: bigint; failed: bigint }[]
  >(Prisma.sql`
    SELECT (SELECT count(*) FROM claim_conflicts WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND kind = 'DIFFERENT_RETRY') AS conflicts,
           (SELECT count(*) FROM raw_events WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND status = 'CONFLICT') AS conflict_events,
           (SELECT count(*) FROM processed_events WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND status = 'HELD') AS held,
           (SELECT count(*) FROM claim_conflicts WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND kind = 'OVER_REFUND') AS over_refunds,
           (SELECT count(*) FROM raw_events WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND status = 'FAILED') AS failed`);
  return {
    conflicts: Number(row!.conflicts),
    conflictEvents: Number(row!.conflict_events),
    held: Number(row!.held),
    overRefunds: Number(row!.over_refunds),
    failed: Number(row!.failed),
  };
}

async function pending(tenantIds: string[]) {
  const [row] = await prisma.$queryRaw<{ raw: bigint; claims: bigint; outbox: bigint }[]>(Prisma.sql`
    SELECT (SELECT count(*) FROM raw_events WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND status IN ('RECEIVED', 'CLAIMED')) AS raw,
           (SELECT count(*) FROM processed_events WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND status = 'CLAIMED') AS claims,
           (SELECT count(*) FROM outbox WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND sent_at IS NULL) AS outbox`);
  return { raw: Number(row!.raw), claims: Number(row!.claims), outbox: Number(row!.outbox) };
}

async function drain(tenantIds: string[], timeoutMs: number, log: (l: string) => void): Promise<number> {
  const started = Date.now();
  let lastLog = started;
  while (true) {
    const p = await pending(tenantIds);
    if (p.raw + p.claims + p.outbox === 0) return Date.now() - started;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(
        `  draining: ${p.raw} events, ${p.claims} claims, ${p.outbox} receipts pending after ${Math.round((Date.now() - started) / 1000)} s`,
      );
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `did not drain within ${timeoutMs} ms: ${p.raw} events, ${p.claims} claims and ${p.outbox} receipts still pending`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** tenant (the day's slug)|provider|reference of a posting. */
const postingKey = (tenant: string, p: { provider: string | null; reference: string | null }) =>
  `${tenant}|${p.provider}|${p.reference}`;

/**
 * The canonical ledger of the replay's tenants, with the prefix stripped, and its
 * fingerprint. Which value of a conflicted key is posted, and which of an
 * over-refund's two equal refunds, depends on which delivery is claimed or
 * committed first, so it may differ between runs that are all correct: those
 * postings (`orderDependent`) and their legs' share of the balances are left out
 * of the fingerprint. They are checked on their own instead (defectProblems):
 * exactly one value posted, and it is one of the key's values.
 */
async function snapshot(tenants: TenantInfo[], prefix: string, orderDependent: Set<string>) {
  const parts: LedgerExport[] = [];
  for (const t of [...tenants].sort((a, b) => a.slug.localeCompare(b.slug))) {
    const e = await exportLedger(t.id, t.slug.slice(prefix.length + 1));
    parts.push(e);
  }
  const stable = parts.map((e) => {
    const left = new Map(e.balances.map((b) => [`${b.account}|${b.currency}`, BigInt(b.amount)]));
    const postings = e.postings.filter((p) => {
      if (!orderDependent.has(postingKey(e.tenant, p))) return true;
      for (const l of p.legs)
        left.set(`${l.account}|${l.currency}`, (left.get(`${l.account}|${l.currency}`) ?? 0n) - BigInt(l.amount));
      return false;
    });
    const balances = e.balances
      .map((b) => ({ ...b, amount: String(left.get(`${b.account}|${b.currency}`)) }))
      .filter((b) => b.amount !== "0");
    return { tenant: e.tenant, postings, balances };
  });
  const text = JSON.stringify(stable);
  return { text, parts, sha256: createHash("sha256").update(text).digest("hex") };
}

/** The postings of a conflicted key or an over-refund's refunds: which one is posted depends on arrival order. */
function orderDependentPostings(defects: Defect[]): Set<string> {
  const out = new Set<string>();
  for (const d of defects) {
    if (d.kind === "changed-retry" || d.kind === "reused-reference") out.add(postingKey(d.tenant, d));
    if (d.kind === "over-refund") for (const r of d.refunds) out.add(postingKey(d.tenant, r));
  }
  return out;
}

/** What the defects must come to in every run: counts the product records, and postings. */
function expectedOfDefects(defects: Defect[], deliveries: Delivery[]) {
  const n = (kinds: Defect["kind"][]) => defects.filter((d) => kinds.includes(d.kind)).length;
  return {
    conflicts: n(["changed-retry", "reused-reference"]),
    held: n(["over-refund"]),
    // A malformed body is refused by the parser as bad money is: both FAILED.
    failed: n(["bad-money"]) + deliveries.filter((d) => d.note === "malformed").length,
    // One posting per conflicted key and per over-refund (the refund not held).
    postings: n(["changed-retry", "reused-reference", "over-refund"]),
  };
}

/** A customer's balance change from a movement (credit-normal: payments negative). */
const customerShare = (m: { kind: string; amount: number }) => (m.kind === "PAYMENT" ? -1n : 1n) * BigInt(m.amount);

/**
 * Each defect's own outcome in the run's ledger. Returns the problems, and the
 * balances the conflicted keys' posted values add to the truth (whichever value won,
 * once it is checked to be one of the key's).
 */
function defectProblems(defects: Defect[], parts: LedgerExport[], movements: Map<string, { created: number }>) {
  const problems: string[] = [];
  const posted = new Map<string, ExportedPosting[]>();
  for (const part of parts)
    for (const p of part.postings) {
      const key = postingKey(part.tenant, p);
      if (!posted.has(key)) posted.set(key, []);
      posted.get(key)!.push(p);
    }
  const truthAdds = new Map<string, bigint>();
  const wrong = (d: Defect, what: string) =>
    problems.push(`planted ${d.kind} ${postingKey(d.tenant, d as { provider: string; reference: string })}: ${what}`);
  for (const d of defects) {
    switch (d.kind) {
      case "changed-retry":
      case "reused-reference": {
        const ps = posted.get(postingKey(d.tenant, d)) ?? [];
        if (ps.length !== 1) {
          wrong(d, `${ps.length} postings, expected exactly one of its ${d.values.length} values`);
          break;
        }
        const value = d.values.find((v) =>
          ps[0]!.legs.some(
            (l) =>
              l.account === `customer:${v.account}` &&
              l.currency === v.currency &&
              BigInt(l.amount) === customerShare(v),
          ),
        );
        if (!value) wrong(d, `posted ${JSON.stringify(ps[0]!.legs)}, which is none of its values`);
        else {
          const key = `${d.tenant}|customer:${value.account}|${value.currency}`;
          truthAdds.set(key, (truthAdds.get(key) ?? 0n) + customerShare(value));
        }
        break;
      }
      case "over-refund": {
        const n = d.refunds.reduce((sum, r) => sum + (posted.get(postingKey(d.tenant, r))?.length ?? 0), 0);
        if (n !== 1)
          problems.push(
            `planted over-refund of stripe ${d.payment}: ${n} of its ${d.refunds.length} refunds posted, expected exactly one`,
          );
        break;
      }
      case "bad-money": {
        const n = posted.get(postingKey(d.tenant, d))?.length ?? 0;
        if (n !== 0) wrong(d, `${d.how} amount posted ${n} time(s), expected refused (FAILED)`);
        break;
      }
      case "late-charge": {
        // Dated by the payment intent, never by the charge event that came days later.
        const ps = posted.get(postingKey(d.tenant, d)) ?? [];
        const created = movements.get(postingKey(d.tenant, d))?.created;
        const at = created === undefined ? "" : new Date(created * 1000).toISOString();
        if (ps.length !== 1 || ps[0]!.occurredAt !== at)
          wrong(
            d,
            `${ps.length} posting(s) dated ${ps.map((p) => p.occurredAt).join(", ") || "-"}, expected one dated ${at}`,
          );
        break;
      }
      case "refund-first": {
        const n = posted.get(postingKey(d.tenant, d))?.length ?? 0;
        if (n !== 1) wrong(d, `the refund sent before its payment posted ${n} time(s), expected once`);
        break;
      }
    }
  }
  return { problems, truthAdds };
}

/** The movements the day delivers: its truth without those the providers never sent. */
function deliveredMovements(header: DayHeader) {
  const dropped = new Set(header.dropped);
  return header.movements.filter((m) => !dropped.has(`${m.tenant}:${m.provider}:${m.reference}`));
}

/** The day's truth as balances: payments credit the customer, refunds debit them. */
function truthBalances(header: DayHeader): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const m of deliveredMovements(header)) {
    const key = `${m.tenant}|customer:${m.account}|${m.currency}`;
    out.set(key, (out.get(key) ?? 0n) + (m.kind === "PAYMENT" ? -BigInt(m.amount) : BigInt(m.amount)));
  }
  // An over-refund's refunds are of equal amounts and exactly one is posted: the balance is known, the reference not.
  for (const d of header.defects ?? [])
    if (d.kind === "over-refund") {
      const r = d.refunds[0]!;
      const key = `${r.tenant}|customer:${r.account}|${r.currency}`;
      out.set(key, (out.get(key) ?? 0n) + BigInt(r.amount));
    }
  return out;
}

function receiptsOf(file: string, tenantIds: Set<string>) {
  const byKey = new Map<string, number>();
  let deliveries = 0;
  if (!existsSync(file)) return { byKey, deliveries };
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line) as { outboxId: string; tenantId: string };
    if (!tenantIds.has(r.tenantId)) continue;
    deliveries++;
    byKey.set(r.outboxId, (byKey.get(r.outboxId) ?? 0) + 1);
  }
  return { byKey, deliveries };
}

/**
 * Receipts are delivered at least once, not exactly once: a worker killed between
 * the transport's yes and recording it sends again, under the same idempotency key
 * (the outbox id), so the receiver drops the repeat. What must hold: every posting's
 * receipt was delivered (its outbox row is marked sent), and every delivery the
 * replay's workers made carries the idempotency key of one of this run's postings.
 */
async function receiptCheck(ids: string[], file: string, idSet: Set<string>) {
  const problems: string[] = [];
  const rows = await prisma.$queryRaw<
    { posting_id: bigint; outbox_id: bigint | null; sent: boolean | null }[]
  >(Prisma.sql`
    SELECT p.id AS posting_id, o.id AS outbox_id, o.sent_at IS NOT NULL AS sent
      FROM postings p
      LEFT JOIN outbox o ON o.posting_id = p.id AND o.kind = 'receipt'
     WHERE p.tenant_id = ANY(${ids}::uuid[]) AND p.processed_event_id IS NOT NULL`);
  const keys = new Set(rows.flatMap((r) => (r.outbox_id === null ? [] : [String(r.outbox_id)])));
  const missing = rows.filter((r) => r.outbox_id === null).length;
  const unsent = rows.filter((r) => r.outbox_id !== null && !r.sent).length;
  if (missing) problems.push(`${missing} posting(s) have no receipt in the outbox`);
  if (unsent) problems.push(`${unsent} posting(s) whose receipt was never delivered`);
  const observed = receiptsOf(file, idSet);
  const foreign = [...observed.byKey.keys()].filter((k) => !keys.has(k));
  if (foreign.length)
    problems.push(`${foreign.length} receipt deliveries carry no posting's idempotency key, e.g. ${foreign[0]}`);
  const perPosting: Record<string, number> = {};
  for (const n of observed.byKey.values()) perPosting[n] = (perPosting[n] ?? 0) + 1;
  return { problems, postingsWithReceipt: rows.length - missing - unsent, deliveries: observed.deliveries, perPosting };
}

/**
 * Asks the product to take one correctly signed PayPal delivery (an event that moves
 * no money), so a product that does not trust the local certificate is named before
 * any run, with what to set, rather than as a run full of 401s.
 */
async function checkPaypalTrusted(target: string, tenant: TenantInfo, paypal: PaypalSigning): Promise<void> {
  const body = JSON.stringify({
    id: `WH-REPLAY-PROBE-${Date.now()}`,
    event_version: "1.0",
    create_time: new Date().toISOString(),
    resource_type: "checkout-order",
    event_type: "CHECKOUT.ORDER.APPROVED",
    summary: "Replay probe: the product trusts the replay's PayPal certificate",
    resource: { id: "REPLAY-PROBE", status: "APPROVED" },
  });
  const signed = signedDelivery({ provider: "paypal", body, signature: "valid", messageId: "probe" }, tenant.secrets, {
    paypal,
  });
  const res = await fetch(`${target}/api/webhooks/${tenant.slug}/paypal`, {
    method: "POST",
    headers: signed.headers,
    body: signed.body,
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status === 200) return;
  const answer = (await res.text()).slice(0, 400);
  const prefix = new URL(paypal.certUrl);
  const suggested =
    localCertificatePrefix(config().TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES)?.href ?? "http://127.0.0.1:4011/";
  throw new Error(
    `the product refused a correctly signed PayPal delivery (HTTP ${res.status}: ${answer}). ` +
      `PayPal deliveries are signed with a local certificate served at ${prefix.href}; the product trusts it only when started with ` +
      `TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES=${suggested} (and TALLY_ALLOW_INSECURE_SIMULATORS=1, since npm start runs as production), ` +
      `and the replay serves it there when given the same TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES. Or generate a day without PayPal (day generate --providers …).`,
  );
}

export async function replay(o: ReplayOptions): Promise<ReplayResult> {
  const { header, deliveries } = await readDayFile(o.file);
  const providers = [...new Set(deliveries.map((d) => d.provider))].sort();
  const accounts = new FlutterwaveAccounts();
  const paypalApps = new PaypalAccounts();
  // Served where the product was told to trust PayPal certificates, when it was told.
  const apis = await startLocalProviderApis({
    flutterwave: accounts,
    paypal: paypalApps,
    certificatePrefix: providers.includes("paypal")
      ? localCertificatePrefix(config().TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES)
      : null,
  });
  try {
    /** A run's own tenants, named <prefix>-r<run>-<slug>: every run starts from an empty ledger. */
    const tenantsOf = async (run: number) => {
      const prefix = `${o.tenantPrefix}-r${run}`;
      const tenants = new Map<string, TenantInfo>();
      for (const slug of header.options.tenants) {
        const tenant = await ensureTenant(`${prefix}-${slug}`, providers, apis.url);
        tenants.set(slug, tenant);
        if (tenant.flutterwaveKey)
          accounts.add(
            tenant.flutterwaveKey,
            header.movements.filter((m) => m.tenant === slug),
          );
        if (tenant.paypalApp)
          paypalApps.add(
            tenant.paypalApp.clientId,
            tenant.paypalApp.clientSecret,
            header.movements.filter((m) => m.tenant === slug),
          );
      }
      return { prefix, tenants };
    };
    const probe = [...(await tenantsOf(1)).tenants.values()][0];
    if (providers.includes("paypal") && probe) await checkPaypalTrusted(o.target, probe, apis.paypal);
    return await replayRuns(o, header, deliveries, tenantsOf, apis);
  } finally {
    await apis.close();
  }
}

type RunTenants = { prefix: string; tenants: Map<string, TenantInfo> };

async function replayRuns(
  o: ReplayOptions,
  header: DayHeader,
  deliveries: Delivery[],
  tenantsOf: (run: number) => Promise<RunTenants>,
  apis: LocalProviderApis,
): Promise<ReplayResult> {
  const receiptsFile = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-replay-")), "receipts.ndjson");
  const random = seeded(o.seed);
  const runs: RunReport[] = [];
  const differences: string[] = [];
  let first: Awaited<ReturnType<typeof snapshot>> | null = null;
  const providers = [...new Set(deliveries.map((d) => d.provider))].sort();
  o.log(
    `replaying ${deliveries.length} deliveries (${header.movements.length} movements; providers ${providers.join(", ")}; tenants ${header.options.tenants.join(", ")}, new ones each run) ${o.runs}× against ${o.target}; ${o.workers} workers, ${o.killEvery ? `a SIGKILL every ${o.killEvery[0]}-${o.killEvery[1]} ms` : "no kills"}`,
  );
  const dayTruth = truthBalances(header);
  const defects = header.defects ?? [];
  const orderDependent = orderDependentPostings(defects);
  const expected = expectedOfDefects(defects, deliveries);
  // Each delivered movement, what its delivery carries besides it (PayPal's capture fees), and the defects'.
  const expectedPostings =
    deliveredMovements(header).length + carriedMovements(deliveredMovements(header)).length + expected.postings;
  const movementsByKey = new Map(header.movements.map((m) => [postingKey(m.tenant, m), m]));
  if (defects.length)
    o.log(
      `planted defects: ${[...new Set(defects.map((d) => d.kind))].map((k) => `${k} ${defects.filter((d) => d.kind === k).length}`).join(", ")}; expected per run: conflicts ${expected.conflicts}, held ${expected.held}, failed ${expected.failed}`,
    );

  for (let run = 1; run <= o.runs; run++) {
    const { prefix, tenants } = await tenantsOf(run);
    const ids = [...tenants.values()].map((t) => t.id);
    const idSet = new Set(ids);
    const order = random.shuffle([...deliveries]);
    const duplicatesBefore = await prisma.rawEvent.count({ where: { tenantId: { in: ids }, status: "DUPLICATE" } });
    const supervisor = new Supervisor({
      workers: o.workers,
      env: { ...REPLAY_WORKER_ENV, TALLY_RECEIPTS_FILE: receiptsFile, ...o.workerEnv },
      killEvery: o.killEvery,
      random: random.next,
      log: o.log,
    });
    supervisor.start();
    const sendStarted = Date.now();
    // A refund planted to arrive before its payment is sent, and acknowledged, before anything else.
    const early = await send(
      order.filter((d) => d.early),
      tenants,
      o.target,
      o.concurrency,
      apis.paypal,
    );
    const rest = await send(
      order.filter((d) => !d.early),
      tenants,
      o.target,
      o.concurrency,
      apis.paypal,
    );
    const sent = {
      accepted: early.accepted + rest.accepted,
      rejected: early.rejected + rest.rejected,
      unexpected: { ...early.unexpected },
    };
    for (const [k, v] of Object.entries(rest.unexpected)) sent.unexpected[k] = (sent.unexpected[k] ?? 0) + v;
    const sendMs = Date.now() - sendStarted;
    let drainMs = -1;
    const problems: string[] = [];
    try {
      drainMs = await drain(ids, o.drainTimeoutMs, o.log);
    } catch (error) {
      problems.push((error as Error).message);
    }
    await supervisor.stop();

    const snap = await snapshot([...tenants.values()], prefix, orderDependent);
    const postings = await prisma.posting.count({ where: { tenantId: { in: ids }, processedEventId: { not: null } } });
    const receipts = await receiptCheck(ids, receiptsFile, idSet);
    // HELD is an over-refund's expected end, counted against the day below; anything else not DONE is left unfinished.
    const notDone = await prisma.processedEvent.count({
      where: { tenantId: { in: ids }, status: { notIn: ["DONE", "HELD"] } },
    });
    const outcomes = await defectCounts(ids);
    if (Object.keys(sent.unexpected).length) problems.push(`unexpected answers: ${JSON.stringify(sent.unexpected)}`);
    if (notDone) problems.push(`${notDone} claim(s) left not DONE`);
    problems.push(...receipts.problems);
    for (const id of ids)
      for (const v of await ledgerViolations(id)) problems.push(`invariant "${v.invariant}" broken: ${v.detail}`);
    for (const [what, got, want] of [
      ["conflicts (claim_conflicts, DIFFERENT_RETRY)", outcomes.conflicts, expected.conflicts],
      ["held claims", outcomes.held, expected.held],
      ["over-refund conflicts (claim_conflicts, OVER_REFUND)", outcomes.overRefunds, expected.held],
      ["failed events", outcomes.failed, expected.failed],
    ] as const)
      if (got !== want) problems.push(`${got} ${what}, expected ${want} from the day`);
    const planted = defectProblems(defects, snap.parts, movementsByKey);
    problems.push(...planted.problems.slice(0, 10));
    if (planted.problems.length > 10) problems.push(`… and ${planted.problems.length - 10} more planted defects wrong`);
    const truth = new Map(dayTruth);
    for (const [k, v] of planted.truthAdds) truth.set(k, (truth.get(k) ?? 0n) + v);
    // Every run against the truth, not only the first: each starts from an empty ledger.
    const actual = new Map<string, bigint>();
    for (const part of snap.parts)
      for (const b of part.balances)
        if (b.account.startsWith("customer:"))
          actual.set(`${part.tenant}|${b.account}|${b.currency}`, BigInt(b.amount));
    const keys = new Set([...truth.keys(), ...actual.keys()]);
    const wrong = [...keys].filter((k) => (truth.get(k) ?? 0n) !== (actual.get(k) ?? 0n));
    if (wrong.length)
      problems.push(
        `${wrong.length} customer balance(s) differ from the day's truth, e.g. ${wrong
          .slice(0, 3)
          .map((k) => `${k}: expected ${truth.get(k) ?? 0n}, got ${actual.get(k) ?? 0n}`)
          .join("; ")}`,
      );
    if (postings !== expectedPostings)
      problems.push(`${postings} postings for ${expectedPostings} movements in the day`);
    if (first === null) first = snap;
    else if (snap.sha256 !== first.sha256) {
      const a = new Set(
        first.parts.flatMap((p) =>
          p.postings.map((x) => `${p.tenant}:${x.provider}:${x.reference}:${x.kind}:${JSON.stringify(x.legs)}`),
        ),
      );
      const b = snap.parts.flatMap((p) =>
        p.postings.map((x) => `${p.tenant}:${x.provider}:${x.reference}:${x.kind}:${JSON.stringify(x.legs)}`),
      );
      const extra = b.filter((x) => !a.has(x));
      const counts = new Map<string, number>();
      for (const x of b) counts.set(x, (counts.get(x) ?? 0) + 1);
      const repeated = [...counts].filter(([, n]) => n > 1).map(([x]) => x);
      problems.push(
        `ledger differs from run 1 (sha256 ${snap.sha256.slice(0, 12)} vs ${first.sha256.slice(0, 12)}): ${extra.length} new posting(s), ${repeated.length} posted more than once${repeated[0] ? `, e.g. ${repeated[0].slice(0, 120)}` : ""}`,
      );
    }
    const report: RunReport = {
      run,
      sent: order.length,
      accepted: sent.accepted,
      rejected: sent.rejected,
      unexpected: sent.unexpected,
      duplicatesAbsorbed:
        (await prisma.rawEvent.count({ where: { tenantId: { in: ids }, status: "DUPLICATE" } })) - duplicatesBefore,
      kills: supervisor.kills,
      sweeps: supervisor.sweeps,
      reclaims: supervisor.reclaims,
      sendMs,
      drainMs,
      postings,
      receiptsDistinct: receipts.postingsWithReceipt,
      receiptDeliveries: receipts.deliveries,
      receiptsPerPosting: receipts.perPosting,
      ...outcomes,
      snapshotSha256: snap.sha256,
      problems,
    };
    runs.push(report);
    differences.push(...problems.map((p) => `run ${run}: ${p}`));
    o.log(
      `run ${run}: sent ${report.sent} (accepted ${report.accepted}, rejected as signed badly ${report.rejected}), duplicates absorbed ${report.duplicatesAbsorbed}, kills ${report.kills}, sweeps ${report.sweeps}, reclaims ${report.reclaims}, send ${(sendMs / 1000).toFixed(1)} s, drain ${(drainMs / 1000).toFixed(1)} s, postings ${postings}, conflicts ${outcomes.conflicts}, held ${outcomes.held}, failed ${outcomes.failed} (deliveries refused as conflicting ${outcomes.conflictEvents}: as many as the losing value's deliveries, so it varies by run), receipts delivered for ${report.receiptsDistinct} (${report.receiptDeliveries} deliveries by the replay's workers; per posting ${Object.entries(
        report.receiptsPerPosting,
      )
        .map(([n, c]) => `${n}×: ${c}`)
        .join(", ")}), ledger ${snap.sha256.slice(0, 12)} ${problems.length ? "DIFFERENT" : "ok"}`,
    );
    for (const p of problems) o.log(`  ✗ ${p}`);
  }
  return { runs, ok: differences.length === 0, differences };
}
