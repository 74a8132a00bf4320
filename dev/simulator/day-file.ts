// A day on disk (ndjson): one header line with the options and the truth (every
// movement the providers settled, and the defects planted with what each must come
// to), then one line per delivery, in send order.
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Day, DayOptions, Delivery } from "@/dev/simulator/day";
import type { Defect } from "@/dev/simulator/defects";
import type { SimMovement } from "@/dev/simulator/payloads";

export type DayHeader = {
  kind: "day";
  version: 1;
  options: Required<DayOptions>;
  movements: SimMovement[];
  dropped: string[];
  /** Absent in days written before defects were planted: none. */
  defects?: Defect[];
};

export async function writeDayFile(file: string, day: Day): Promise<void> {
  const out = createWriteStream(file);
  const write = (line: object) =>
    out.write(`${JSON.stringify(line)}\n`) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r()));
  const header: DayHeader = {
    kind: "day",
    version: 1,
    options: day.options,
    movements: day.movements,
    dropped: day.dropped.map((m) => `${m.tenant}:${m.provider}:${m.reference}`),
    defects: day.defects,
  };
  await write(header);
  for (const d of day.deliveries) await write({ kind: "delivery", ...d });
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

export async function readDayFile(file: string): Promise<{ header: DayHeader; deliveries: Delivery[] }> {
  let header: DayHeader | null = null;
  const deliveries: Delivery[] = [];
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    let value: { kind?: string };
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`${file} line ${n}: not JSON`);
    }
    if (value.kind === "day") header = value as DayHeader;
    else if (value.kind === "delivery") {
      const { kind: _kind, ...d } = value as Delivery & { kind: string };
      deliveries.push(d);
    } else throw new Error(`${file} line ${n}: expected a "day" header or a "delivery"`);
  }
  if (!header) throw new Error(`${file}: no day header (generate it with npm run tally -- day generate)`);
  return { header, deliveries };
}
