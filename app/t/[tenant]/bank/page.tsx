// Bank: import a statement (accountants) and the statements imported, with how
// much of each matched the payouts in transit.
import { StatementsTable, type StatementRowView } from "@/components/bank/statements-table";
import { StatementUploadForm } from "@/components/bank/upload-form";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { listStatements } from "@/lib/bank/statements";
import { config } from "@/lib/platform/config";
import { plain } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

export default async function Page({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<{ before?: string }>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "bank");
  if (!allowed) return <NoAccess role={principal.role} section="Bank" />;
  const before = bigintId.safeParse((await searchParams).before ?? "");
  const page = plain(await listStatements(tenant.id, { beforeId: before.success ? before.data : undefined })) as {
    statements: StatementRowView[];
    nextBefore: string | null;
  };
  return (
    <>
      <h1>Bank</h1>
      <p className="muted">
        Each statement is matched to the payouts in transit: by the payout&apos;s reference in the remittance text, or
        by amount and booking date within the endpoint&apos;s lag (a credit may settle several payouts). A payout the
        statements should show and do not, and a provider&apos;s credit no payout explains, become cases.
      </p>
      {mayDo(principal.role, "importBank") && (
        <StatementUploadForm tenant={slug} maxBytes={config().TALLY_RECON_UPLOAD_MAX_BYTES} />
      )}
      <h2>Statements</h2>
      <StatementsTable tenant={slug} statements={page.statements} nextBefore={page.nextBefore} />
    </>
  );
}
