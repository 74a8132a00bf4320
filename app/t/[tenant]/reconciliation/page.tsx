// Reconciliation: not built yet; the page exists so the nav is complete and honest.
import { EmptyState, NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";

export const dynamic = "force-dynamic";

export default async function Page({ params }: { params: Promise<{ tenant: string }> }) {
  const { principal, allowed } = await requirePage((await params).tenant, "reconciliation");
  if (!allowed) return <NoAccess role={principal.role} section="Reconciliation" />;
  return (
    <>
      <h1>Reconciliation</h1>
      <EmptyState title="Nothing here yet">
        <p>Daily runs comparing the ledger with each provider's settlement report will be listed here. This page arrives with reconciliation.</p>
      </EmptyState>
    </>
  );
}
