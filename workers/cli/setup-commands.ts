// tenant, secret, user and token commands: setting Tally up for a tenant.
import { cliActor } from "@/lib/admin/audit";
import { createApiToken } from "@/lib/auth/api-tokens";
import { prisma } from "@/lib/platform/db";
import {
  addSecret,
  createTenant,
  generateSecret,
  setRawBodyRetention,
  updateEndpointSettings,
} from "@/lib/admin/tenants";
import { createUser } from "@/lib/admin/users";
import { adapterFor, supportedProviders } from "@/lib/providers";
import { flags, CommandFailed, orFail, table, UsageError, type Command } from "@/workers/cli/framework";

const str = (v: unknown) => v as string;
const positiveInt = (name: string, v: unknown) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return n;
};
/** A whole-number flag that may be left out (then the domain keeps its default). */
const optionalInt = (a: Record<string, unknown>, name: string) =>
  a[name] !== undefined ? positiveInt(name, a[name]) : undefined;

export const setupCommands: Command[] = [
  {
    name: "tenant add",
    summary: "Create a tenant (its slug appears in webhook URLs)",
    options: flags({ slug: "string", name: "string" }),
    required: ["slug", "name"],
    database: true,
    async run(a) {
      const t = orFail(await createTenant({ slug: str(a.slug), name: str(a.name) }, cliActor()));
      console.log(`Tenant ${t.slug} created (${t.id}).`);
    },
  },
  {
    name: "tenant retention",
    summary:
      "Set how many days the tenant's raw bodies are kept (30..36500; default 400): older ones are removed by the worker, their SHA-256 kept",
    options: flags({ tenant: "string", days: "string", reason: "string" }),
    required: ["tenant", "days", "reason"],
    database: true,
    async run(a) {
      const days = positiveInt("days", a.days);
      const r = orFail(await setRawBodyRetention(str(a.tenant), days, cliActor(), str(a.reason)));
      console.log(`Tenant ${a.tenant}: raw bodies kept ${r.rawBodyRetentionDays} days (was ${r.previous}).`);
    },
  },
  {
    name: "tenant list",
    summary: "List tenants and their endpoints",
    options: {},
    database: true,
    async run() {
      const tenants = await prisma.tenant.findMany({
        orderBy: { slug: "asc" },
        include: { endpoints: { include: { secrets: { where: { revokedAt: null } } } } },
      });
      console.log(
        table(
          tenants.map((t) => ({
            slug: t.slug,
            name: t.name,
            "body retention": `${t.rawBodyRetentionDays} d`,
            endpoints: t.endpoints
              .map((e) => `${e.provider}(${e.secrets.length} secret${e.secrets.length === 1 ? "" : "s"})`)
              .join(" "),
          })),
        ),
      );
    },
  },
  {
    name: "secret add",
    summary: "Add a webhook signing secret; --overlap-hours makes it a rotation (older secrets expire then)",
    options: flags({
      tenant: "string",
      provider: "string",
      secret: "string",
      generate: "boolean",
      label: "string",
      "overlap-hours": "string",
      "tolerance-seconds": "string",
    }),
    required: ["tenant", "provider"],
    database: true,
    async run(a) {
      const adapter = adapterFor(str(a.provider));
      if (!adapter) throw new UsageError(`--provider must be one of ${supportedProviders().join(", ")}`);
      if (!a.secret && !a.generate)
        throw new UsageError("Give --secret <value> (as the provider shows it) or --generate");
      const secret = a.secret ? str(a.secret) : generateSecret(adapter.provider);
      const r = orFail(
        await addSecret(
          str(a.tenant),
          adapter.provider,
          secret,
          {
            label: a.label as string | undefined,
            overlapSeconds:
              a["overlap-hours"] !== undefined ? positiveInt("overlap-hours", a["overlap-hours"]) * 3600 : undefined,
            toleranceSeconds: optionalInt(a, "tolerance-seconds"),
          },
          cliActor(),
        ),
      );
      console.log(
        `Secret added to ${a.tenant}/${adapter.provider}${r.expiring ? `; ${r.expiring} older secret(s) expire after the overlap` : ""}.`,
      );
      if (a.generate) console.log(`Secret (shown once): ${secret}`);
      console.log(`Webhook URL: /api/webhooks/${a.tenant}/${adapter.provider}`);
    },
  },
  {
    name: "endpoint set",
    summary:
      "Change a provider endpoint: --setting key=value (apiKey, apiBaseUrl, webhookId, secretKey, reconLookbackDays; key= removes), --tolerance-seconds, --enable/--disable",
    options: flags({
      tenant: "string",
      provider: "string",
      setting: "strings",
      "tolerance-seconds": "string",
      enable: "boolean",
      disable: "boolean",
      "match-tolerance": "string",
      "match-lag-days": "string",
      "match-priority": "string",
    }),
    required: ["tenant", "provider"],
    database: true,
    async run(a) {
      const settings: Record<string, string | number | null> = {};
      for (const pair of (a.setting as string[] | undefined) ?? []) {
        const eq = pair.indexOf("=");
        if (eq < 1) throw new UsageError(`--setting must be key=value, got "${pair}"`);
        const value = pair.slice(eq + 1);
        settings[pair.slice(0, eq)] =
          value === "" ? null : /^\d+$/.test(value) && pair.startsWith("recon") ? Number(value) : value;
      }
      if (a.enable && a.disable) throw new UsageError("Give --enable or --disable, not both");
      const r = orFail(
        await updateEndpointSettings(
          str(a.tenant),
          str(a.provider),
          {
            settings,
            enabled: a.enable ? true : a.disable ? false : undefined,
            toleranceSeconds: optionalInt(a, "tolerance-seconds"),
            matchRules: {
              ...(a["match-tolerance"] !== undefined && {
                toleranceMinor: BigInt(optionalInt(a, "match-tolerance")!),
              }),
              ...(a["match-lag-days"] !== undefined && { dateLagDays: optionalInt(a, "match-lag-days") }),
              ...(a["match-priority"] !== undefined && { priority: str(a["match-priority"]).split(",") }),
            },
          },
          cliActor(),
        ),
      );
      console.log(
        `Endpoint ${a.tenant}/${a.provider}: ${r.enabled ? "enabled" : "DISABLED"}, tolerance ${r.toleranceSeconds} s, matching within ${r.matchRules.toleranceMinor} minor units, bank lag ${r.matchRules.dateLagDays} days, priority ${r.matchRules.priority.join(",")}, settings ${JSON.stringify(r.settings)}`,
      );
    },
  },
  {
    name: "user add",
    summary: "Create a dashboard user; prints a generated password once unless --password is given",
    options: flags({ email: "string", role: "string", tenant: "strings", password: "string", name: "string" }),
    required: ["email", "role"],
    database: true,
    async run(a) {
      const u = orFail(
        await createUser(
          {
            email: str(a.email),
            role: str(a.role),
            tenants: (a.tenant as string[] | undefined) ?? [],
            password: a.password as string | undefined,
            name: a.name as string | undefined,
          },
          cliActor(),
        ),
      );
      console.log(`User ${u.email} created with role ${a.role}.`);
      if (!a.password) console.log(`Password (shown once): ${u.password}`);
    },
  },
  {
    name: "token add",
    summary: "Create an API token for one tenant and role; the token is printed once",
    options: flags({ tenant: "string", role: "string", name: "string" }),
    required: ["tenant", "role"],
    database: true,
    async run(a) {
      const t = orFail(
        await createApiToken(
          { tenant: str(a.tenant), role: str(a.role), name: a.name as string | undefined },
          cliActor(),
        ),
      );
      console.log(`API token for ${a.tenant} (${a.role}), shown once; only its hash is stored:\n${t.token}`);
    },
  },
];

export function requireTenant(slug: unknown) {
  return prisma.tenant.findUnique({ where: { slug: str(slug) } }).then((t) => {
    if (!t) throw new CommandFailed(`Unknown tenant "${slug}"`);
    return t;
  });
}
