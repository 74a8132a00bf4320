// Cases: not built yet; the page exists so the nav is complete and honest.
import { EmptyState, NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";

export const dynamic = "force-dynamic";

export default async function Page({ params }: { params: Promise<{ tenant: string }> }) {
  const { principal, allowed } = await requirePage((await params).tenant, "cases");
  if (!allowed) return <NoAccess role={principal.role} section="Cases" />;
  return (
    <>
      <h1>Cases</h1>
      <EmptyState title="Nothing here yet">
        <p>Discrepancies found by reconciliation become cases for accountants to resolve here. This page arrives with reconciliation.</p>
      </EmptyState>
    </>
  );
}
