// Stuck claims: not built yet; the page exists so the nav is complete and honest.
import { EmptyState, NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";

export const dynamic = "force-dynamic";

export default async function Page({ params }: { params: Promise<{ tenant: string }> }) {
  const { principal, allowed } = await requirePage((await params).tenant, "claims");
  if (!allowed) return <NoAccess role={principal.role} section="Stuck claims" />;
  return (
    <>
      <h1>Stuck claims</h1>
      <EmptyState title="Nothing here yet">
        <p>Claims a worker took and has not finished (older than the stale-claim limit) will be listed here, with release and retry actions. This page arrives with the worker.</p>
      </EmptyState>
    </>
  );
}
