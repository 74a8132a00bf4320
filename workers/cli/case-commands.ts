// cases commands: what reconciliation left for a person to decide, from the
// shell. Read-only: proposing and approving happen signed in, four-eyes.
import { listCases } from "@/lib/cases/cases";
import { flags, printJson, table, UsageError, type Command } from "@/workers/cli/framework";
import { requireTenant } from "@/workers/cli/setup-commands";

const minor = (amount: bigint | null, currency: string | null) =>
  amount === null || !currency ? "" : `${amount} ${currency.trim()} (minor)`;

export const caseCommands: Command[] = [
  {
    name: "cases list",
    summary: "List a tenant's cases (open by default) and any proposal waiting for approval",
    options: flags({ tenant: "string", state: "string", limit: "string", json: "boolean" }),
    required: ["tenant"],
    database: true,
    async run(a) {
      const state = String(a.state ?? "open");
      if (!["open", "closed", "all"].includes(state)) throw new UsageError("--state must be open, closed or all");
      const limit = a.limit === undefined ? 50 : Number(a.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200)
        throw new UsageError("--limit must be a whole number from 1 to 200");
      const tenant = await requireTenant(a.tenant);
      const { cases } = await listCases({ tenantId: tenant.id, state: state as "open" | "closed" | "all", limit });
      if (a.json) return printJson(cases);
      console.log(
        table(
          cases.map((c) => {
            const p = c.proposals[0];
            return {
              id: c.id,
              kind:
                c.kind === "OURS_NOT_THEIRS"
                  ? "ours-not-theirs"
                  : c.kind === "MISMATCH"
                    ? "mismatch"
                    : `conflict (${c.conflict?.kind.toLowerCase().replace("_", " ")})`,
              status: c.status,
              provider: c.discrepancy?.provider ?? c.conflict?.provider,
              reference: c.discrepancy?.reference ?? c.conflict?.reference,
              day: (c.discrepancy?.day ?? c.conflict?.detectedAt)?.toISOString().slice(0, 10),
              ours: c.discrepancy ? minor(c.discrepancy.ourAmount, c.discrepancy.ourCurrency) : "",
              theirs: c.discrepancy ? minor(c.discrepancy.theirAmount, c.discrepancy.theirCurrency) : "",
              proposal: p
                ? `${p.resolution.toLowerCase()} by ${p.proposedByLabel}, ${p.approvals.filter((x) => x.decision === "APPROVE").length}/${p.requiredApprovals} approvals`
                : "",
            };
          }),
        ),
      );
      console.log(
        `\n${cases.length} ${state === "all" ? "" : `${state} `}case(s). Decide them in the dashboard: /t/${tenant.slug}/cases`,
      );
    },
  },
];
