// Reconciliation: start a run against a provider's settlement API, upload a
// settlement report, and the list of runs (scheduled, started by people, failed).
import Link from "next/link";
import { ExportForm } from "@/components/export-form";
import { RunsTable, type RunPage } from "@/components/recon/runs-table";
import { StartRunForm } from "@/components/recon/start-run-form";
import { UploadForm } from "@/components/recon/upload-form";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { plain } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";
import { listRuns } from "@/lib/recon/runs";
import { settlementSourceFor } from "@/lib/recon/report-formats";

export const dynamic = "force-dynamic";

export default async function Page({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<{ before?: string }>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "reconciliation");
  if (!allowed) return <NoAccess role={principal.role} section="Reconciliation" />;
  const before = bigintId.safeParse((await searchParams).before ?? "");
  const [page, endpoints] = await Promise.all([
    listRuns(tenant.id, { beforeId: before.success ? before.data : undefined }),
    prisma.providerEndpoint.findMany({
      where: { tenantId: tenant.id },
      select: { provider: true, settings: true },
      orderBy: { provider: "asc" },
    }),
  ]);
  const withApi = endpoints
    .filter((e) => settlementSourceFor(e.provider) && (e.settings as Record<string, unknown>)?.apiKey)
    .map((e) => e.provider);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const canRun = mayDo(principal.role, "reconcile");
  return (
    <>
      <h1>Reconciliation</h1>
      <p>
        <Link href={`/t/${slug}/reconciliation/payouts`} data-testid="payouts-link">
          Payouts and their close statements →
        </Link>
      </p>
      <p className="muted">
        Each run compares a window of the provider&apos;s settlement with the ledger: matched, theirs-not-ours (fetched
        and posted through the normal path), ours-not-theirs and mismatches (cases for an accountant).
      </p>
      {canRun && (
        <div className="two-col">
          <StartRunForm tenant={slug} providers={withApi} defaultDay={yesterday} />
          <UploadForm
            tenant={slug}
            providers={endpoints.length ? endpoints.map((e) => e.provider) : ["stripe"]}
            maxBytes={config().TALLY_RECON_UPLOAD_MAX_BYTES}
          />
        </div>
      )}
      <h2>Runs</h2>
      <RunsTable tenant={slug} before={before.success ? String(before.data) : ""} initial={plain(page) as RunPage} />
      <h2>Export</h2>
      <ExportForm tenant={slug} kind="discrepancies" what="discrepancies" />
    </>
  );
}
