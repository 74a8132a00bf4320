// ledger export, ledger verify and day generate: the replay's inputs and its evidence.
import path from "node:path";
import { exportLedger, ledgerCsv, ledgerJson } from "@/lib/ledger/export";
import { DEFAULT_PROVIDER_WEIGHTS, generateDay, providersFromText } from "@/dev/simulator/day";
import { writeDayFile } from "@/dev/simulator/day-file";
import { CommandFailed, flags, UsageError, type Command } from "@/workers/cli/framework";
import { ledgerViolations } from "@/lib/ledger/invariants";
import { requireTenant } from "@/workers/cli/setup-commands";

const wholeNumber = (flag: string, v: unknown, min = 0) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${flag} must be a whole number${min ? ` of at least ${min}` : ""}, got "${v}"`);
  return n;
};

export const ledgerCommands: Command[] = [
  {
    name: "ledger export",
    summary: "Print the tenant's ledger, canonically ordered (two exports of the same ledger are byte-identical)",
    options: flags({ tenant: "string", format: "string" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const format = String(a.format ?? "json");
      if (format !== "json" && format !== "csv") throw new UsageError("--format must be json or csv");
      const tenant = await requireTenant(a.tenant);
      const e = await exportLedger(tenant.id, tenant.slug);
      process.stdout.write(format === "csv" ? ledgerCsv(e) : ledgerJson(e));
    },
  },
  {
    name: "ledger verify",
    summary:
      "Check the ledger's invariants (each posting sums to zero per currency, each balance, slots summed, equals the sum of its entries, a claim is DONE exactly when posted, one receipt per posted movement); --tenant for one tenant, all by default; exits 1 naming each violation",
    options: flags({ tenant: "string" }),
    database: true,
    async run(a) {
      const tenant = a.tenant === undefined ? undefined : await requireTenant(a.tenant);
      const violations = await ledgerViolations(tenant?.id);
      const scope = tenant ? `tenant ${tenant.slug}` : "all tenants";
      if (violations.length > 0) {
        for (const v of violations) console.log(`${v.invariant}: ${v.detail}`);
        throw new CommandFailed(`${violations.length} ledger invariant violation(s) in ${scope}`);
      }
      console.log(`ledger verified (${scope}): no violations`);
    },
  },
  {
    name: "day generate",
    summary:
      "Write a realistic, deterministic day of provider deliveries (ndjson) for npm run replay; --providers stripe,adyen (drawn equally) or stripe=4,adyen=1 (weighted), default all six weighted towards Stripe; --adversarial on plants defects with their expected outcomes (dev/simulator/defects.ts; default off here, on in npm run replay --generate and replay:day)",
    options: flags({
      events: "string",
      seed: "string",
      out: "string",
      tenants: "string",
      date: "string",
      providers: "string",
      adversarial: "string",
    }),
    required: ["events", "out"],
    async run(a) {
      const events = wholeNumber("events", a.events, 1);
      const seed = a.seed === undefined ? 1 : wholeNumber("seed", a.seed);
      const tenants = String(a.tenants ?? "alpha,beta,gamma")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (tenants.length === 0) throw new UsageError("--tenants must name at least one tenant");
      const date = String(a.date ?? "2026-12-01");
      const dayStart = Date.parse(`${date}T00:00:00Z`) / 1000;
      if (!Number.isFinite(dayStart)) throw new UsageError(`--date must be YYYY-MM-DD, got "${date}"`);
      // A list draws each provider equally; name=weight pairs weight them. Default: all six, weighted towards Stripe.
      let providers;
      try {
        providers = a.providers === undefined ? DEFAULT_PROVIDER_WEIGHTS : providersFromText(String(a.providers));
      } catch (e) {
        throw new UsageError(
          `--providers: ${(e as Error).message}; give a comma list (stripe,adyen) or weights (stripe=4,adyen=1)`,
        );
      }
      const adversarial = String(a.adversarial ?? "off");
      if (adversarial !== "on" && adversarial !== "off") throw new UsageError("--adversarial must be on or off");
      const day = generateDay({ seed, events, tenants, dayStart, providers, adversarial: adversarial === "on" });
      await writeDayFile(String(a.out), day);
      const notes = new Map<string, number>();
      for (const d of day.deliveries) notes.set(d.note, (notes.get(d.note) ?? 0) + 1);
      console.log(
        `${day.deliveries.length} deliveries for ${day.movements.length} movements (${tenants.join(", ")}) written to ${path.resolve(String(a.out))}`,
      );
      console.log(`  ${[...notes].map(([k, v]) => `${k} ${v}`).join(", ")}`);
      const byProvider = new Map<string, number>();
      for (const m of day.movements) byProvider.set(m.provider, (byProvider.get(m.provider) ?? 0) + 1);
      console.log(`  movements by provider: ${[...byProvider].map(([k, v]) => `${k} ${v}`).join(", ")}`);
      const defects = new Map<string, number>();
      for (const d of day.defects) defects.set(d.kind, (defects.get(d.kind) ?? 0) + 1);
      if (defects.size) console.log(`  planted defects: ${[...defects].map(([k, v]) => `${k} ${v}`).join(", ")}`);
    },
  },
];
