// Stuck claims: claims held longer than the stale-claim threshold, FAILED claims
// and events that failed to parse, with a Reprocess action for ops.
import { StuckClaims, type StuckData } from "@/components/claims/stuck-claims";
import { duration } from "@/components/format";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { config } from "@/lib/platform/config";
import { plain } from "@/lib/platform/http";
import { listStuck } from "@/lib/views/stuck-claims";

export const dynamic = "force-dynamic";

export default async function Page({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "claims");
  if (!allowed) return <NoAccess role={principal.role} section="Stuck claims" />;
  const staleMs = config().TALLY_STALE_CLAIM_MS;
  const items = await listStuck(tenant.id, staleMs);
  return (
    <>
      <h1>Stuck claims</h1>
      <p className="muted">
        Claims a worker has held longer than {duration(staleMs)} (the sweep will release those), claims that gave up
        after {config().TALLY_MAX_ATTEMPTS} attempts or could not be posted, and events that could not be parsed.
        Reprocessing sends the event back through the normal path; a payment is still posted exactly once.
      </p>
      <StuckClaims
        tenant={slug}
        initial={plain({ staleMs, items }) as StuckData}
        canReprocess={mayDo(principal.role, "reprocess")}
      />
    </>
  );
}
