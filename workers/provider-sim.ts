// `npm run provider-sim`: plays Stripe for one tenant. Sends a generated day of
// correctly signed webhooks to Tally (with retries, duplicates, reordering,
// reformatted payloads and dropped deliveries), then keeps serving the
// settlement API Tally's reconciliation reads, until Ctrl-C.
import { parseArgs } from "node:util";
import { generateDay } from "@/lib/simulator/day";
import { startSimulator } from "@/lib/simulator/server";

const USAGE = "npm run provider-sim -- --target http://localhost:3000 --tenant demo --stripe-secret whsec_… [--events 200] [--seed 1] [--drop 0.05] [--dup 0.2] [--port 4010] [--api-key sk_test_simulator] [--days-ago 1]";

async function main() {
  let args;
  try {
    args = parseArgs({
      options: {
        target: { type: "string" }, tenant: { type: "string" }, "stripe-secret": { type: "string" },
        events: { type: "string", default: "200" }, seed: { type: "string", default: "1" }, drop: { type: "string", default: "0.05" }, dup: { type: "string", default: "0.2" },
        port: { type: "string", default: "4010" }, "api-key": { type: "string", default: "sk_test_simulator" }, "days-ago": { type: "string", default: "0" },
      },
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\nUsage: ${USAGE}`);
    process.exit(2);
  }
  if (!args.target || !args.tenant || !args["stripe-secret"]) {
    console.error(`Missing --target, --tenant or --stripe-secret\nUsage: ${USAGE}`);
    process.exit(2);
  }
  const now = Date.now() - Number(args["days-ago"]) * 86_400_000;
  const dayStart = Math.floor(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) / 1000);
  const day = generateDay({ seed: Number(args.seed), events: Number(args.events), tenants: [args.tenant], providers: ["stripe"], dayStart, dropRate: Number(args.drop), retryRate: Number(args.dup) });
  const sim = await startSimulator({ day, tenant: args.tenant, apiKey: args["api-key"], port: Number(args.port) });
  console.log(`Simulated Stripe API at ${sim.url} (API key ${sim.apiKey}); ${sim.movements.length} movements on ${new Date(dayStart * 1000).toISOString().slice(0, 10)}`);
  const report = await sim.deliver(args.target, { stripe: args["stripe-secret"], standard: "" });
  console.log(JSON.stringify({ ...report, dropped: report.dropped.length, droppedReferences: report.dropped }, null, 2));
  console.log(`Point the tenant's stripe endpoint at it (settings apiBaseUrl=${sim.url}, apiKey=${sim.apiKey}) and run: npm run tally -- recon run --tenant ${args.tenant} --provider stripe --date ${new Date(dayStart * 1000).toISOString().slice(0, 10)}`);
  const stop = () => sim.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
