// POST /api/v1/tenants/{tenant}/reconciliation/uploads?provider=&format=&name=
// with the settlement report as the raw body (Stripe itemized balance report,
// Adyen Settlement Details, or Tally's reference,kind,amount,currency,occurred_at).
// The body is streamed to a temp file under TALLY_RECON_UPLOAD_MAX_BYTES, then
// reconciled (window: the file's own span). A malformed file is refused whole
// with the row and column at fault; nothing is imported.
import { z } from "zod";
import { actorOf, requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { Provider } from "@/lib/generated/prisma/enums";
import { accessError, domainError, handled, json, parseInput, queryOf } from "@/lib/platform/http";
import { reportFormats } from "@/lib/recon/report-formats";
import { startReconciliation } from "@/lib/recon/start";
import { receiveReport } from "@/lib/recon/upload";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string }> };

const blank = (v: unknown) => (v === "" ? undefined : v);
const Query = z.object({
  provider: z.enum(Object.values(Provider) as [Provider, ...Provider[]]),
  format: z.preprocess(blank, z.enum(reportFormats() as [string, ...string[]]).optional()),
  name: z.preprocess(blank, z.string().max(255).optional()),
});

export const POST = handled(async (request: Request, { params }: Params) => {
  // Access before reading a byte of the body.
  const access = await requireAccess(request, { tenant: (await params).tenant, roles: ACTION_ROLES.reconcile });
  if (!access.ok) return accessError(access);
  const q = parseInput(Query, queryOf(request));
  if (!q.ok) return q.response;
  const maxBytes = config().TALLY_RECON_UPLOAD_MAX_BYTES;
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) return domainError({ reason: "too_large", message: `The report is ${Math.ceil(declared / 1024 / 1024)} MiB; the limit is ${Math.round(maxBytes / 1024 / 1024)} MiB (TALLY_RECON_UPLOAD_MAX_BYTES)` });
  const received = await receiveReport(request.body, { maxBytes, fileName: q.value.name ?? "settlement-report.csv" });
  if (!received.ok) return domainError(received);
  try {
    const r = await startReconciliation({ tenantId: access.tenant.id, provider: q.value.provider, source: { kind: "csv", file: received.file, format: q.value.format }, fileName: q.value.name, actor: actorOf(access.principal) });
    if (!r.ok) return domainError(r);
    return json({ ...r.value, bytes: received.bytes }, { status: 201 });
  } finally {
    await received.remove();
  }
});
