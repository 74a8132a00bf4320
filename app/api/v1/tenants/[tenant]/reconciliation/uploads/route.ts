// POST /api/v1/tenants/{tenant}/reconciliation/uploads?provider=&format=&name=
// with the settlement report as the raw body (Stripe itemized balance report,
// Adyen Settlement Details, or Tally's reference,kind,amount,currency,occurred_at).
// The body is streamed to a temp file under TALLY_RECON_UPLOAD_MAX_BYTES, then
// reconciled (window: the file's own span). A malformed file is refused whole
// with the row and column at fault; nothing is imported.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { Provider } from "@/lib/generated/prisma/enums";
import { json } from "@/lib/platform/http";
import { refuse } from "@/lib/platform/refusal";
import { reportFormats } from "@/lib/recon/report-formats";
import { startReconciliation } from "@/lib/recon/start";
import { receiveReport } from "@/lib/recon/upload";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  provider: z.enum(Object.values(Provider) as [Provider, ...Provider[]]),
  format: z.preprocess(blank, z.enum(reportFormats() as [string, ...string[]]).optional()),
  name: z.preprocess(blank, z.string().max(255).optional()),
});

// No body schema: the wrapper checks access before a byte of the body is read, and the body is streamed here.
export const POST = withTenant(
  { roles: ACTION_ROLES.reconcile, query: Query },
  async ({ request, tenant, actor, query }) => {
    const maxBytes = config().TALLY_RECON_UPLOAD_MAX_BYTES;
    const declared = Number(request.headers.get("content-length") ?? NaN);
    if (declared > maxBytes)
      return refuse(
        "too_large",
        `The report is ${Math.ceil(declared / 1024 / 1024)} MiB; the limit is ${Math.round(maxBytes / 1024 / 1024)} MiB (TALLY_RECON_UPLOAD_MAX_BYTES)`,
      );
    const received = await receiveReport(request.body, { maxBytes, fileName: query.name ?? "settlement-report.csv" });
    if (!received.ok) return received;
    try {
      const r = await startReconciliation({
        tenantId: tenant.id,
        provider: query.provider,
        source: { kind: "csv", file: received.file, format: query.format },
        fileName: query.name,
        actor,
      });
      return r.ok ? json({ ...r.value, bytes: received.bytes }, { status: 201 }) : r;
    } finally {
      await received.remove();
    }
  },
);
