// GET /api/v1/tenants/{tenant}/payouts/{id}[?format=csv]: one payout's close statement, from
// the provider's lines and from our ledger side by side (with statement.bankReference, the
// text its transfer carries to the bank, or null), and every line with both sides;
// format=csv: the lines as CSV after the statement's two rows.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { csvDocument } from "@/lib/platform/csv-writer";
import { json, jsonError } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { getPayoutById, statementCsvRows } from "@/lib/recon/payouts";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({ format: z.preprocess(blank, z.enum(["json", "csv"]).default("json")) });

export const GET = withTenant(
  { roles: SECTION_ROLES.reconciliation, params: { id: bigintId }, query: Query },
  async ({ tenant, params, query }) => {
    const payout = await getPayoutById(tenant.id, params.id);
    if (!payout) return jsonError(404, "not_found", `No payout ${params.id} in tenant ${tenant.slug}`);
    if (query.format === "csv") {
      const [header, ...rows] = statementCsvRows([payout.statement]);
      const lines = [
        [],
        [
          "line_id",
          "reference",
          "kind",
          "occurred_at",
          "currency",
          "provider_gross",
          "provider_fee",
          "ledger_gross",
          "ledger_fee",
          "agrees",
        ],
        ...payout.lines.map((l) => [
          l.lineId,
          l.reference,
          l.kind,
          l.occurredAt.toISOString(),
          l.currency,
          String(l.theirGross),
          String(l.theirFee),
          String(l.ourGross),
          String(l.ourFee),
          l.agrees ? "yes" : "no",
        ]),
      ];
      return new Response(csvDocument(header!, [...rows, ...lines]), {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="payout-${payout.statement.reference}.csv"`,
          "cache-control": "no-store",
        },
      });
    }
    return json(payout, { headers: { "cache-control": "no-store" } });
  },
);
