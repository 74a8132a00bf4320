// `npm run month -- --out DIR [--seed 1] [--tenant month] [--start 2026-11-01] [--days 30]
// [--charges-per-day 20] [--defects all|none|missing_fee,short_payout,…]`: a generated
// Stripe month (dev/simulator/month.ts) on disk, for reconciling it by hand:
//   deliveries.ndjson   a "month" header line, then one line per delivery in send order
//                       (bodies to sign at send time with dev/simulator/sign.ts)
//   settlement.csv      Stripe's itemized balance report with fees and payouts
//   bank.camt053.xml    the payouts' bank account, ISO 20022 camt.053.001.02
//   truth.json          payouts, the expected outcome of each planted defect, balances
//                       (amounts in minor units, as decimal strings)
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { generateMonth, MONTH_DEFECTS, type Month, type MonthDefect, monthJson } from "@/dev/simulator/month";

const USAGE =
  "npm run month -- --out DIR [--seed 1] [--tenant month] [--start 2026-11-01] [--days 30] [--charges-per-day 20] [--defects all|none|" +
  `${MONTH_DEFECTS.join(",")}]`;

function fail(message: string): never {
  console.error(`${message}\nUsage: ${USAGE}`);
  process.exit(2);
}

function wholeNumber(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) fail(`--${name} must be a whole number, got "${text}"`);
  return n;
}

function defectsFrom(text: string): MonthDefect[] {
  if (text === "all") return [...MONTH_DEFECTS];
  if (text === "none") return [];
  const names = text.split(",").map((d) => d.trim());
  for (const d of names)
    if (!(MONTH_DEFECTS as readonly string[]).includes(d))
      fail(`--defects: unknown defect "${d}" (known: ${MONTH_DEFECTS.join(", ")}, or all, none)`);
  return names as MonthDefect[];
}

async function writeDeliveries(file: string, month: Month): Promise<void> {
  const out = createWriteStream(file);
  const write = (line: object) =>
    out.write(`${monthJson(line)}\n`) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r()));
  const { deliveries: _deliveries, settlementCsv: _csv, camt053: _camt, truth: _truth, ...header } = month;
  await write({ kind: "month", version: 1, ...header });
  for (const d of month.deliveries) await write({ kind: "delivery", ...d });
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

async function main() {
  let a;
  try {
    a = parseArgs({
      options: {
        out: { type: "string" },
        seed: { type: "string", default: "1" },
        tenant: { type: "string" },
        start: { type: "string" },
        days: { type: "string" },
        "charges-per-day": { type: "string" },
        defects: { type: "string", default: "all" },
      },
    }).values;
  } catch (e) {
    fail((e as Error).message);
  }
  if (!a.out) fail("--out is required: the folder to write the month into");
  let month: Month;
  try {
    month = generateMonth({
      seed: wholeNumber("seed", a.seed),
      ...(a.tenant !== undefined && { tenant: a.tenant }),
      ...(a.start !== undefined && { start: a.start }),
      ...(a.days !== undefined && { days: wholeNumber("days", a.days) }),
      ...(a["charges-per-day"] !== undefined && {
        chargesPerDay: wholeNumber("charges-per-day", a["charges-per-day"]),
      }),
      defects: defectsFrom(a.defects),
    });
  } catch (e) {
    fail((e as Error).message);
  }
  mkdirSync(a.out, { recursive: true });
  await writeDeliveries(path.join(a.out, "deliveries.ndjson"), month);
  writeFileSync(path.join(a.out, "settlement.csv"), month.settlementCsv);
  writeFileSync(path.join(a.out, "bank.camt053.xml"), month.camt053);
  writeFileSync(path.join(a.out, "truth.json"), `${monthJson(month.truth, 2)}\n`);
  const { payouts, expected } = month.truth;
  console.log(
    `${month.days} days from ${month.start} for tenant ${month.tenant}: ${month.deliveries.length} deliveries, ` +
      `${month.settlementCsv.split("\n").length - 2} settlement lines, ${payouts.length} payouts, ` +
      `${month.truth.bank.entries} bank entries → ${path.resolve(a.out)}`,
  );
  for (const e of expected) console.log(`  ${e.defect}: expect ${e.kind} on ${e.reference}`);
}

await main();
