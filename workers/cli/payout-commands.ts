// payout commands: every payout's close statement, from the provider's lines and
// our ledger side by side (lib/recon/payouts.ts), as the payouts page shows them.
import { formatMoney } from "@/components/money";
import type { Provider } from "@/lib/generated/prisma/enums";
import { adapterFor } from "@/lib/providers";
import { getPayout, listPayouts, type StatementSide } from "@/lib/recon/payouts";
import { flags, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

const ROWS: [keyof StatementSide, string][] = [
  ["gross", "gross"],
  ["refunds", "refunds"],
  ["fees", "fees"],
  ["disputes", "disputes"],
  ["adjustments", "adjustments"],
  ["net", "net"],
  ["payout", "payout"],
  ["residual", "residual"],
];

export const payoutCommands: Command[] = [
  {
    name: "payouts list",
    summary: "A tenant's payouts: amount, whether each statement balances (theirs and ours), and the bank",
    options: flags({ tenant: "string", provider: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const provider = a.provider as Provider | undefined;
      if (provider && !adapterFor(provider)) throw new UsageError(`no provider "${provider}"`);
      const payouts = await listPayouts({ tenantId: tenant.id, provider });
      if (a.json) return printJson(payouts);
      const m = (v: bigint | null, currency: string) => (v === null ? "" : formatMoney(v, currency));
      console.log(
        table(
          payouts.map((p) => ({
            payout: p.reference,
            provider: p.provider,
            arrival: p.arrivalDate?.toISOString().slice(0, 10) ?? "",
            amount: m(p.theirs.payout ?? p.ours.payout, p.currency),
            lines: p.lines,
            "residual (theirs)": m(p.theirs.residual, p.currency),
            "residual (ours)": m(p.ours.residual, p.currency),
            bank: p.status.toLowerCase().replace("_", " "),
          })),
        ),
      );
    },
  },
  {
    name: "payouts show",
    summary: "One payout's close statement: gross − refunds − fees − disputes ± adjustments = net = payout",
    options: flags({ tenant: "string", provider: "string", payout: "string", json: "boolean" }),
    required: ["tenant", "payout"],
    database: true,
    async run(a) {
      const tenant = await requireTenant(a.tenant);
      const provider = (a.provider ?? "stripe") as Provider;
      const found = await getPayout(tenant.id, provider, String(a.payout));
      if (!found) throw new UsageError(`no ${provider} payout ${a.payout} in tenant ${tenant.slug}`);
      if (a.json) return printJson(found);
      const s = found.statement;
      const m = (v: bigint | null) => (v === null ? "—" : formatMoney(v, s.currency));
      console.log(
        `payout ${s.reference} (${s.provider}), ${s.lines} lines, ${s.status.toLowerCase().replace("_", " ")}`,
      );
      console.log(
        table(
          ROWS.map(([key, label]) => ({
            "": label,
            [`${s.provider}'s report`]: m(s.theirs[key]),
            "our ledger": m(s.ours[key]),
          })),
        ),
      );
    },
  },
];
