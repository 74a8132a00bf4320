// Tenants, their provider endpoints and signing secrets. Secrets can overlap
// during a rotation: the old one keeps verifying until its expiry.
import { providerApiBase } from "@/lib/providers/api-base";
import { createHash, randomBytes } from "node:crypto";
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { isTenantSlug } from "@/lib/admin/slug";
import { prisma } from "@/lib/platform/db";
import { CREDENTIAL_SETTING, open, openSettings, seal, sealSettings } from "@/lib/platform/secrets-at-rest";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import type { Provider } from "@/lib/generated/prisma/enums";
import { adapterFor } from "@/lib/providers";
import { refuse, type DomainResult, type Refusal } from "@/lib/platform/refusal";

// Kept for imports written before refusals had their own module.
export type { DomainResult };

export async function createTenant(
  input: { slug: string; name: string },
  actor: Actor,
): Promise<DomainResult<{ id: string; slug: string }>> {
  if (!isTenantSlug(input.slug))
    return {
      ok: false,
      reason: "invalid_slug",
      message: `Slug "${input.slug}" must be lower-case letters, digits and dashes (it appears in webhook URLs)`,
    };
  if (!input.name.trim()) return { ok: false, reason: "invalid_name", message: "Name must not be empty" };
  const existing = await prisma.tenant.findUnique({ where: { slug: input.slug } });
  if (existing) return { ok: false, reason: "exists", message: `Tenant "${input.slug}" already exists` };
  const tenant = await prisma.$transaction(async (tx) => {
    const t = await tx.tenant.create({ data: { slug: input.slug, name: input.name.trim() } });
    await recordAudit(tx, {
      actor,
      action: "tenant.create",
      subjectType: "tenant",
      subjectId: t.id,
      tenantId: t.id,
      details: { slug: t.slug, name: t.name },
    });
    return t;
  });
  forgetEndpoints(input.slug);
  return { ok: true, value: { id: tenant.id, slug: tenant.slug } };
}

/** A fresh secret in the provider's own format. */
export function generateSecret(provider: Provider): string {
  switch (provider) {
    case "stripe":
    case "standard":
      return `whsec_${randomBytes(24).toString("base64")}`;
    case "adyen":
      return randomBytes(32).toString("hex").toUpperCase();
    default:
      return randomBytes(32).toString("hex");
  }
}

function secretFormatProblem(provider: Provider, secret: string): string | null {
  if (secret !== secret.trim())
    return "Secret has leading or trailing whitespace; paste it exactly as the provider shows it";
  if (secret.length < 8) return "Secret is too short";
  if (provider === "stripe" && !secret.startsWith("whsec_"))
    return "A Stripe webhook signing secret starts with whsec_ (not the API key sk_…)";
  if (provider === "standard" && !/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/.test(secret))
    return "A Standard Webhooks secret is whsec_ followed by base64";
  return null;
}

export type SecretOptions = {
  label?: string;
  /** Rotation: keep the currently active secrets valid for this long, then let them expire. */
  overlapSeconds?: number;
  toleranceSeconds?: number;
};

/** Adds a secret to the tenant's endpoint for the provider, creating the endpoint on first use. */
export async function addSecret(
  tenantSlug: string,
  providerName: string,
  secret: string,
  options: SecretOptions,
  actor: Actor,
): Promise<DomainResult<{ endpointId: string; secretId: string; expiring: number }>> {
  const adapter = adapterFor(providerName);
  if (!adapter) return { ok: false, reason: "unknown_provider", message: `Unknown provider "${providerName}"` };
  const provider = adapter.provider;
  const problem = secretFormatProblem(provider, secret);
  if (problem) return { ok: false, reason: "invalid_secret", message: problem };
  const tenant = await prisma.tenant.findUnique({ where: { slug: tenantSlug } });
  if (!tenant) return { ok: false, reason: "unknown_tenant", message: `Unknown tenant "${tenantSlug}"` };
  const result = await prisma.$transaction(async (tx) => {
    const endpoint = await tx.providerEndpoint.upsert({
      where: { tenantId_provider: { tenantId: tenant.id, provider } },
      create: {
        tenantId: tenant.id,
        provider,
        ...(options.toleranceSeconds !== undefined && { toleranceSeconds: options.toleranceSeconds }),
      },
      update: options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {},
    });
    let expiring = 0;
    if (options.overlapSeconds !== undefined) {
      const until = new Date(Date.now() + options.overlapSeconds * 1000);
      const r = await tx.endpointSecret.updateMany({
        where: { endpointId: endpoint.id, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: until } }] },
        data: { expiresAt: until },
      });
      expiring = r.count;
    }
    const row = await tx.endpointSecret.create({
      data: { endpointId: endpoint.id, secret: seal(secret), label: options.label ?? null },
    });
    await recordAudit(tx, {
      actor,
      action: options.overlapSeconds !== undefined ? "secret.rotate" : "secret.add",
      subjectType: "endpoint_secret",
      subjectId: row.id,
      tenantId: tenant.id,
      details: { provider, label: options.label ?? null, overlapSeconds: options.overlapSeconds ?? null, expiring },
    });
    return { endpointId: endpoint.id, secretId: row.id, expiring };
  });
  forgetEndpoints(tenantSlug);
  return { ok: true, value: result };
}

/** Revokes a secret at once. With `tenantId`, a secret of another tenant is "not found". */
export async function revokeSecret(
  secretId: string,
  reason: string,
  actor: Actor,
  scope: { tenantId?: string } = {},
): Promise<DomainResult<null>> {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const secret = UUID.test(secretId)
    ? await prisma.endpointSecret.findUnique({
        where: { id: secretId },
        include: { endpoint: { include: { tenant: true } } },
      })
    : null;
  if (!secret || (scope.tenantId && secret.endpoint.tenantId !== scope.tenantId))
    return { ok: false, reason: "not_found", message: `No secret ${secretId}` };
  if (secret.revokedAt) return { ok: false, reason: "already_revoked", message: "Secret is already revoked" };
  await prisma.$transaction(async (tx) => {
    await tx.endpointSecret.update({ where: { id: secretId }, data: { revokedAt: new Date() } });
    await recordAudit(tx, {
      actor,
      action: "secret.revoke",
      subjectType: "endpoint_secret",
      subjectId: secretId,
      tenantId: secret.endpoint.tenantId,
      reason,
    });
  });
  forgetEndpoints(secret.endpoint.tenant.slug);
  return { ok: true, value: null };
}

export type TenantRow = { id: string; slug: string; name: string; createdAt: Date; endpoints: number; members: number };

export async function listTenants(where: { ids?: string[] } = {}): Promise<TenantRow[]> {
  const rows = await prisma.tenant.findMany({
    where: where.ids ? { id: { in: where.ids } } : {},
    orderBy: { slug: "asc" },
    include: { _count: { select: { endpoints: true, members: true } } },
  });
  return rows.map((t) => ({
    id: t.id,
    slug: t.slug,
    name: t.name,
    createdAt: t.createdAt,
    endpoints: t._count.endpoints,
    members: t._count.members,
  }));
}

/**
 * A short, stable way to tell secrets apart without showing them: 32 bits of
 * their SHA-256, which says nothing useful about a high-entropy secret.
 */
export function secretFingerprint(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 8);
}

export type SecretState = "active" | "expiring" | "expired" | "revoked";
export type SecretRow = {
  id: string;
  label: string | null;
  fingerprint: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  state: SecretState;
};
export type EndpointRow = {
  id: string;
  provider: Provider;
  enabled: boolean;
  toleranceSeconds: number;
  matchRules: MatchRules;
  createdAt: Date;
  secrets: SecretRow[];
};

function secretState(s: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): SecretState {
  if (s.revokedAt) return "revoked";
  if (s.expiresAt && s.expiresAt <= now) return "expired";
  return s.expiresAt ? "expiring" : "active";
}

/** A tenant's endpoints and secret metadata; secret values never leave this function. */
export async function listEndpoints(tenantId: string, now = new Date()): Promise<EndpointRow[]> {
  const endpoints = await prisma.providerEndpoint.findMany({
    where: { tenantId },
    orderBy: { provider: "asc" },
    include: { secrets: { orderBy: { createdAt: "desc" } } },
  });
  return endpoints.map((e) => ({
    id: e.id,
    provider: e.provider,
    enabled: e.enabled,
    toleranceSeconds: e.toleranceSeconds,
    matchRules: { toleranceMinor: e.matchToleranceMinor, dateLagDays: e.matchDateLagDays, priority: e.matchPriority },
    createdAt: e.createdAt,
    secrets: e.secrets.map((s) => ({
      id: s.id,
      label: s.label,
      fingerprint: secretFingerprint(open(s.secret)),
      createdAt: s.createdAt,
      expiresAt: s.expiresAt,
      revokedAt: s.revokedAt,
      state: secretState(s, now),
    })),
  }));
}

/** Settings whose values are credentials: never echoed back or written to the audit log. */
const CREDENTIAL = CREDENTIAL_SETTING;

export function maskSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [
      k,
      CREDENTIAL.test(k) && typeof v === "string" && v ? `${v.slice(0, 4)}…(${v.length})` : v,
    ]),
  );
}

export type MatchRules = { toleranceMinor: bigint; dateLagDays: number; priority: string[] };

/** What an endpoint's settings change leaves: the saved values (credentials masked). */
export type EndpointSettings = {
  settings: Record<string, unknown>;
  enabled: boolean;
  toleranceSeconds: number;
  matchRules: MatchRules;
};

type EndpointChanges = {
  settings?: Record<string, string | number | null>;
  enabled?: boolean;
  toleranceSeconds?: number;
  /** Reconciliation's matching rules (lib/recon/run.ts, lib/bank/match.ts). */
  matchRules?: Partial<MatchRules>;
};

/** The first value a person may not save, as the refusal that names it; null when all may be. */
function endpointChangeProblem(changes: EndpointChanges): Refusal | null {
  if (
    changes.toleranceSeconds !== undefined &&
    !(Number.isInteger(changes.toleranceSeconds) && changes.toleranceSeconds >= 0 && changes.toleranceSeconds <= 86_400)
  )
    return refuse(
      "invalid_tolerance",
      `The signature tolerance must be a whole number of seconds, 0 to 86400, got ${changes.toleranceSeconds}`,
    );
  const rules = changes.matchRules ?? {};
  if (rules.toleranceMinor !== undefined && !(rules.toleranceMinor >= 0n && rules.toleranceMinor <= 1_000_000n))
    return refuse(
      "invalid_match_rules",
      `The amount tolerance must be between 0 and 1,000,000 minor units, got ${rules.toleranceMinor}`,
    );
  if (
    rules.dateLagDays !== undefined &&
    !(Number.isInteger(rules.dateLagDays) && rules.dateLagDays >= 0 && rules.dateLagDays <= 60)
  )
    return refuse(
      "invalid_match_rules",
      `The date lag must be a whole number of days, 0 to 60, got ${rules.dateLagDays}`,
    );
  if (
    rules.priority !== undefined &&
    (rules.priority.length === 0 ||
      new Set(rules.priority).size !== rules.priority.length ||
      rules.priority.some((r) => r !== "reference" && r !== "amount_date"))
  )
    return refuse(
      "invalid_match_rules",
      `The matching priority lists "reference" and/or "amount_date", each once, got ${JSON.stringify(rules.priority)}`,
    );
  return null;
}

const sameValue = (a: unknown, b: unknown) =>
  JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) ===
  JSON.stringify(b, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

/**
 * Changes an endpoint's provider settings (API base URL and key for
 * reconciliation, PayPal's webhookId, …; null removes a setting), whether it
 * accepts deliveries, its signature tolerance and its matching rules. Audited
 * with each changed value before and after (credentials masked) and the reason;
 * a change that changes nothing writes nothing.
 */
export async function updateEndpointSettings(
  tenantSlug: string,
  providerName: string,
  changes: EndpointChanges,
  actor: Actor,
  reason?: string | null,
): Promise<DomainResult<EndpointSettings>> {
  const adapter = adapterFor(providerName);
  if (!adapter) return { ok: false, reason: "unknown_provider", message: `Unknown provider "${providerName}"` };
  const tenant = await prisma.tenant.findUnique({ where: { slug: tenantSlug } });
  if (!tenant) return { ok: false, reason: "unknown_tenant", message: `Unknown tenant "${tenantSlug}"` };
  const problem = endpointChangeProblem(changes);
  if (problem) return problem;
  // Checked here as well as where it is used, so a base the key may not go to is a clear 400 now.
  const apiBaseUrl = changes.settings?.apiBaseUrl;
  if (typeof apiBaseUrl === "string" && adapter.api) {
    const base = providerApiBase(apiBaseUrl, adapter.api);
    if (!base.ok) return { ok: false, reason: "invalid_url", message: base.message };
  }
  const rules = changes.matchRules ?? {};
  const result = await prisma.$transaction(async (tx) => {
    // The row is locked before it is read: two admins saving at once each see the
    // other's values as "before", and neither's settings merge drops the other's keys.
    const [locked] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM provider_endpoints WHERE tenant_id = ${tenant.id}::uuid AND provider = ${adapter.provider}::"Provider" FOR UPDATE`;
    if (!locked) return null;
    const endpoint = await tx.providerEndpoint.findUniqueOrThrow({ where: { id: locked.id } });
    const before = (endpoint.settings ?? {}) as Record<string, unknown>;
    const settings = { ...before };
    for (const [k, v] of Object.entries(changes.settings ?? {})) {
      if (v === null) delete settings[k];
      else settings[k] = v;
    }
    const openedBefore = openSettings(before);
    const settingsChanged = Object.entries(changes.settings ?? {})
      .filter(([k, v]) => !sameValue(openedBefore[k], v ?? undefined))
      .map(([k]) => k);
    const fields = {
      enabled: [endpoint.enabled, changes.enabled],
      toleranceSeconds: [endpoint.toleranceSeconds, changes.toleranceSeconds],
      matchToleranceMinor: [endpoint.matchToleranceMinor, rules.toleranceMinor],
      matchDateLagDays: [endpoint.matchDateLagDays, rules.dateLagDays],
      matchPriority: [endpoint.matchPriority, rules.priority],
    } as const;
    const changed: Record<string, { from: unknown; to: unknown }> = {};
    for (const [name, [from, to]] of Object.entries(fields))
      if (to !== undefined && !sameValue(from, to)) changed[name] = { from, to };
    if (settingsChanged.length > 0) {
      const masked = (values: Record<string, unknown>) =>
        maskSettings(Object.fromEntries(settingsChanged.map((k) => [k, values[k] ?? null])));
      changed.settings = { from: masked(openedBefore), to: masked(openSettings(settings)) };
    }
    if (Object.keys(changed).length === 0) return endpoint;
    const row = await tx.providerEndpoint.update({
      where: { id: endpoint.id },
      data: {
        ...(settingsChanged.length > 0 && { settings: sealSettings(settings) as object }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled }),
        ...(changes.toleranceSeconds !== undefined && { toleranceSeconds: changes.toleranceSeconds }),
        ...(rules.toleranceMinor !== undefined && { matchToleranceMinor: rules.toleranceMinor }),
        ...(rules.dateLagDays !== undefined && { matchDateLagDays: rules.dateLagDays }),
        ...(rules.priority !== undefined && { matchPriority: rules.priority }),
      },
    });
    await recordAudit(tx, {
      actor,
      action: "endpoint.update",
      subjectType: "provider_endpoint",
      subjectId: endpoint.id,
      tenantId: tenant.id,
      reason: reason?.trim() || null,
      details: { provider: adapter.provider, changed },
    });
    return row;
  });
  if (!result)
    return {
      ok: false,
      reason: "unknown_endpoint",
      message: `Tenant "${tenantSlug}" has no ${adapter.provider} endpoint; add a secret first`,
    };
  forgetEndpoints(tenantSlug);
  return {
    ok: true,
    value: {
      settings: maskSettings(openSettings((result.settings ?? {}) as Record<string, unknown>)),
      enabled: result.enabled,
      toleranceSeconds: result.toleranceSeconds,
      matchRules: {
        toleranceMinor: result.matchToleranceMinor,
        dateLagDays: result.matchDateLagDays,
        priority: result.matchPriority,
      },
    },
  };
}

export const RETENTION_DAYS = { min: 30, max: 36_500 } as const;

/** The tenant's retention of raw bodies, and how far its removal has got. */
export function rawBodyRetention(tenantId: string) {
  return prisma.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { rawBodyRetentionDays: true, rawBodiesPurgedBefore: true },
  });
}

/**
 * Sets how long the tenant's raw bodies are kept (days; the worker's maintenance
 * job removes older ones, keeping their hash). Audited with the reason: a shorter
 * retention destroys evidence, so it is a decision someone answers for.
 */
export async function setRawBodyRetention(
  tenantSlug: string,
  days: number,
  actor: Actor,
  reason: string,
): Promise<DomainResult<{ rawBodyRetentionDays: number; previous: number }>> {
  if (!Number.isInteger(days) || days < RETENTION_DAYS.min || days > RETENTION_DAYS.max)
    return {
      ok: false,
      reason: "invalid_retention",
      message: `Retention of raw bodies must be a whole number of days from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}, got ${days}`,
    };
  if (reason.trim() === "")
    return { ok: false, reason: "reason_required", message: "Say why the retention of raw bodies changes" };
  return prisma.$transaction(async (tx) => {
    const [tenant] = await tx.$queryRaw<{ id: string; days: number }[]>`
      SELECT id, raw_body_retention_days AS days FROM tenants WHERE slug = ${tenantSlug} FOR UPDATE`;
    if (!tenant)
      return { ok: false as const, reason: "unknown_tenant" as const, message: `Unknown tenant "${tenantSlug}"` };
    // The purge's watermark stays: every body before it is gone whatever the retention
    // (a longer one cannot bring them back), and a shorter one goes on from it.
    await tx.tenant.update({ where: { id: tenant.id }, data: { rawBodyRetentionDays: days } });
    await recordAudit(tx, {
      actor,
      action: "tenant.retention",
      subjectType: "tenant",
      subjectId: tenant.id,
      tenantId: tenant.id,
      reason: reason.trim(),
      details: { rawBodyRetentionDays: { from: tenant.days, to: days } },
    });
    return { ok: true as const, value: { rawBodyRetentionDays: days, previous: tenant.days } };
  });
}
