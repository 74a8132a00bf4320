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
import { countDeadReceipts } from "@/lib/pipeline/dead-letters";
import Link from "next/link";

export const dynamic = "force-dynamic";

export default async function Page({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "claims");
  if (!allowed) return <NoAccess role={principal.role} section="Stuck claims" />;
  const staleMs = config().TALLY_STALE_CLAIM_MS;
  const [items, dead] = await Promise.all([listStuck(tenant.id, staleMs), countDeadReceipts(tenant.id, {})]);
  return (
    <>
      <h1>Stuck claims</h1>
      <p className="muted">
        Claims a worker has held longer than {duration(staleMs)} (the sweep will release those), claims that gave up
        after {config().TALLY_MAX_ATTEMPTS} attempts or could not be posted, and events that could not be parsed.
        Reprocessing sends the event back through the normal path; a payment is still posted exactly once.
      </p>
      <p>
        <Link href={`/t/${slug}/claims/dead-receipts`}>
          {dead === 0 ? "No dead receipts" : `${dead} dead receipt${dead === 1 ? "" : "s"}`}
        </Link>{" "}
        <span className="muted">(receipts the receiving system refused on every retry)</span>
      </p>
      <StuckClaims
        tenant={slug}
        initial={plain({ staleMs, items }) as StuckData}
        canReprocess={mayDo(principal.role, "reprocess")}
      />
    </>
  );
}
