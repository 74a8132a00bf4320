// `npm run replay -- --file day.ndjson [--runs 3] [--kill-every 1000-3000] [--workers 2]`:
// the replay proof against a running product (npm start). Exit code 1, naming
// the difference, when any run's ledger is not identical to the first.
// `npm run replay:day` generates a 100,000-delivery day first. A generated day
// is adversarial unless --adversarial off (dev/simulator/defects.ts: conflicts,
// over-refunds, bad amounts… each with the outcome every run must reach). A day with PayPal
// needs the product to trust the replay's local certificate: start both with the
// same TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES (see lib/platform/config.ts).
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { config } from "@/lib/platform/config";
import { closeDb } from "@/lib/platform/db";
import { replay } from "@/dev/replay";
import { DEFAULT_PROVIDER_WEIGHTS, generateDay, providersFromText } from "@/dev/simulator/day";
import { writeDayFile } from "@/dev/simulator/day-file";

const USAGE =
  "npm run replay -- --file day.ndjson [--target http://localhost:3000] [--runs 3] [--kill-every 1000-3000 | none] [--workers 2] [--concurrency 32] [--seed 1] [--prefix replay-x] [--generate N [--providers stripe,adyen,…] [--adversarial on|off]] [--fault-disable-claim] [--report out.json]";

function fail(message: string): never {
  console.error(`${message}\nUsage: ${USAGE}`);
  process.exit(2);
}

async function main() {
  let a;
  try {
    a = parseArgs({
      options: {
        file: { type: "string" },
        target: { type: "string" },
        runs: { type: "string", default: "3" },
        "kill-every": { type: "string", default: "1000-3000" },
        workers: { type: "string", default: "2" },
        concurrency: { type: "string", default: "32" },
        seed: { type: "string", default: "1" },
        prefix: { type: "string" },
        generate: { type: "string" },
        providers: { type: "string" },
        adversarial: { type: "string", default: "on" },
        "fault-disable-claim": { type: "boolean" },
        "drain-timeout": { type: "string", default: "900000" },
        report: { type: "string" },
      },
    }).values;
  } catch (e) {
    fail((e as Error).message);
  }
  if (a.adversarial !== "on" && a.adversarial !== "off")
    fail(`--adversarial must be on or off, got "${a.adversarial}"`);
  let file = a.file;
  if (a.generate) {
    const events = Number(a.generate);
    if (!Number.isInteger(events) || events < 1) fail("--generate must be a number of deliveries");
    let providers;
    try {
      providers = a.providers === undefined ? DEFAULT_PROVIDER_WEIGHTS : providersFromText(a.providers);
    } catch (e) {
      fail(`--providers: ${(e as Error).message}`);
    }
    file ??= path.join(
      mkdtempSync(path.join(os.tmpdir(), "tally-day-")),
      `day-${events}${a.adversarial === "on" ? "-adversarial" : ""}.ndjson`,
    );
    if (!existsSync(file)) {
      console.log(`generating ${events} deliveries into ${file}…`);
      await writeDayFile(
        file,
        generateDay({
          seed: Number(a.seed),
          events,
          tenants: ["alpha", "beta", "gamma"],
          dayStart: Date.UTC(2026, 11, 1) / 1000,
          providers,
          adversarial: a.adversarial === "on",
        }),
      );
    }
  }
  if (!file) fail("Give --file <day.ndjson> (npm run tally -- day generate …) or --generate <N>");
  let killEvery: [number, number] | null = null;
  if (a["kill-every"] !== "none") {
    const m = /^(\d+)-(\d+)$/.exec(a["kill-every"]!);
    if (!m || Number(m[1]) > Number(m[2]) || Number(m[1]) < 100)
      fail(`--kill-every must be a range in ms like 1000-3000 (at least 100), or none; got "${a["kill-every"]}"`);
    killEvery = [Number(m[1]), Number(m[2])];
  }
  const target = (a.target ?? `http://localhost:${config().PORT}`).replace(/\/$/, "");
  try {
    const health = await fetch(`${target}/api/health`, { signal: AbortSignal.timeout(5000) });
    if (health.status !== 200) throw new Error(`health answered ${health.status}`);
  } catch (e) {
    console.error(`The product is not answering at ${target} (${(e as Error).message}). Start it first: npm start`);
    process.exit(2);
  }
  const result = await replay({
    file,
    target,
    runs: Number(a.runs),
    killEvery,
    workers: Number(a.workers),
    concurrency: Number(a.concurrency),
    seed: Number(a.seed),
    tenantPrefix: a.prefix ?? `replay-${Date.now().toString(36)}`,
    workerEnv: a["fault-disable-claim"] ? { TALLY_FAULT_DISABLE_CLAIM: "1" } : {},
    drainTimeoutMs: Number(a["drain-timeout"]),
    log: (line) => console.log(line),
  });
  if (a.report) writeFileSync(a.report, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    result.ok
      ? `VERDICT: identical — ${result.runs.length} runs, every ledger equal to the first and to the day's truth.`
      : `VERDICT: DIFFERENT\n${result.differences.map((d) => `  - ${d}`).join("\n")}`,
  );
  await closeDb();
  process.exit(result.ok ? 0 : 1);
}

main().catch(async (e) => {
  console.error(e);
  await closeDb();
  process.exit(1);
});
