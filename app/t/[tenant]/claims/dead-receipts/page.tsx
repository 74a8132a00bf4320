// Dead receipts: receipts whose retry schedule ran out, filtered by provider,
// reference prefix and when they died, with redelivery of the selected ones or
// of everything the filter matches (ops; confirmed against the count; audited).
import { DeadReceipts, type DeadPage } from "@/components/claims/dead-receipts";
import { NoAccess } from "@/components/states";
import { requirePage } from "@/lib/auth/page-access";
import { mayDo } from "@/lib/auth/roles";
import { Provider } from "@/lib/generated/prisma/enums";
import { config } from "@/lib/platform/config";
import { plain } from "@/lib/platform/http";
import { DeadReceiptQuery } from "@/lib/platform/query-params";
import { listDeadReceipts } from "@/lib/pipeline/dead-letters";

export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;

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
  const raw = Object.fromEntries(
    Object.entries(await searchParams).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
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
        <label>
          Provider
          <select name="provider" defaultValue={raw.provider ?? ""}>
            <option value="">Any</option>
            {Object.values(Provider).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Died from
          <input type="date" name="from" defaultValue={raw.from ?? ""} />
        </label>
        <label>
          Died to
          <input type="date" name="to" defaultValue={raw.to ?? ""} />
        </label>
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
