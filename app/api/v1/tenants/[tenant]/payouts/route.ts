// GET /api/v1/tenants/{tenant}/payouts[?provider=&status=&format=csv]: every payout with its
// statement from both sides (the provider's lines, our ledger) and their residuals
// (lib/recon/payouts.ts). format=csv: the statements as CSV, one row per side.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { SECTION_ROLES } from "@/lib/auth/roles";
import { Provider, PayoutStatus } from "@/lib/generated/prisma/enums";
import { csvDocument } from "@/lib/platform/csv-writer";
import { json } from "@/lib/platform/http";
import { listPayouts, statementCsvRows } from "@/lib/recon/payouts";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const PayoutQuery = z.object({
  provider: z.preprocess(blank, z.enum(Provider).optional()),
  status: z.preprocess(blank, z.enum(PayoutStatus).optional()),
  format: z.preprocess(blank, z.enum(["json", "csv"]).default("json")),
});

export const GET = withTenant(
  { roles: SECTION_ROLES.reconciliation, query: PayoutQuery },
  async ({ tenant, query }) => {
    const payouts = await listPayouts({ tenantId: tenant.id, provider: query.provider, status: query.status });
    if (query.format === "csv") {
      const [header, ...rows] = statementCsvRows(payouts);
      return new Response(csvDocument(header!, rows), {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="payouts-${tenant.slug}.csv"`,
          "cache-control": "no-store",
        },
      });
    }
    return json({ payouts }, { headers: { "cache-control": "no-store" } });
  },
);
