// Dead receipts: receipts whose retry schedule ran out, filtered by provider,
// reference prefix and when they died, with redelivery of the selected ones or
// of everything the filter matches (ops; confirmed against the count; audited).
import { DeadReceipts, type DeadPage } from "@/components/claims/dead-receipts";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { DayRange, formValues, ProviderSelect, type Search } from "@/components/filter-fields";
import { config } from "@/lib/platform/config";
import { plain } from "@/lib/platform/http";
import { DeadReceiptQuery } from "@/lib/platform/query-params";
import { listDeadReceipts } from "@/lib/pipeline/dead-letters";

export const dynamic = "force-dynamic";

export default async function DeadReceiptsPage({
  params,
  searchParams,
}: {
  params: Promise<{ tenant: string }>;
  searchParams: Promise<Search>;
}) {
  const { tenant: slug } = await params;
  const { principal, tenant, allowed } = await requirePage(slug, "claims");
  if (!allowed) return <NoAccess role={principal.role} section="Dead receipts" />;
  const raw = await formValues(searchParams);
  const q = DeadReceiptQuery.safeParse(raw);
  const filter = Object.fromEntries(
    Object.entries(raw).filter(([k, v]) => v !== "" && ["provider", "reference", "from", "to"].includes(k)),
  );
  const steps = config().TALLY_RECEIPT_RETRY_SCHEDULE.length;
  return (
    <>
      <h1>Dead receipts</h1>
      <p className="muted">
        Receipts the receiving system refused on the first delivery and on all {steps} retries of the schedule
        (TALLY_RECEIPT_RETRY_SCHEDULE). Nothing sends them again until you redeliver them; a redelivered receipt carries
        the same idempotency key, so a receiver that did get it drops the repeat.
      </p>
      <form method="get" className="filters" role="search" aria-label="Filter dead receipts">
        <label>
          Reference starts with
          <input name="reference" defaultValue={raw.reference ?? ""} placeholder="pi_…" />
        </label>
        <ProviderSelect value={raw.provider} />
        <DayRange values={raw} fromLabel="Died from" toLabel="Died to" />
        <button type="submit">Search</button>
      </form>
      {q.success ? (
        <DeadReceipts
          tenant={slug}
          filter={filter}
          canRedeliver={mayDo(principal.role, "redeliver")}
          initial={plain(await listDeadReceipts(tenant.id, q.data)) as DeadPage}
        />
      ) : (
        <p role="alert" className="error">
          Fix the filter: {q.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}
        </p>
      )}
    </>
  );
}
