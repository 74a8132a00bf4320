// Fields the dashboard's filter forms share (plain GET forms read back from the
// URL): a provider select and a pair of day inputs, and the page's search params
// reduced to the strings a form can have sent.
import { Provider } from "@/lib/generated/prisma/enums";

export type Search = Record<string, string | string[] | undefined>;

/** The search params a GET form sends: repeated or missing keys dropped. */
export async function formValues(searchParams: Promise<Search>): Promise<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(await searchParams).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

export function ProviderSelect({ value }: { value?: string }) {
  return (
    <label>
      Provider
      <select name="provider" defaultValue={value ?? ""}>
        <option value="">Any</option>
        {Object.values(Provider).map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
    </label>
  );
}

/** "from" and "to" as days (both included), labelled `fromLabel` and `toLabel`. */
export function DayRange({
  values,
  fromLabel = "From",
  toLabel = "To",
}: {
  values: Record<string, string>;
  fromLabel?: string;
  toLabel?: string;
}) {
  return (
    <>
      <label>
        {fromLabel}
        <input type="date" name="from" defaultValue={values.from ?? ""} />
      </label>
      <label>
        {toLabel}
        <input type="date" name="to" defaultValue={values.to ?? ""} />
      </label>
    </>
  );
}
