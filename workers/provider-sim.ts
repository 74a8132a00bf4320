// `npm run provider-sim`: plays the providers of a tenant (Stripe unless told
// otherwise). Sends a generated day of correctly signed webhooks to Tally (with
// retries, duplicates, reordering, reformatted payloads and dropped deliveries),
// then keeps serving what Tally calls back: Stripe's settlement API for
// reconciliation, Flutterwave's verify endpoint, PayPal's token and payments API
// and certificate. Until Ctrl-C.
import { parseArgs } from "node:util";
import { generateDay, providersFromText } from "@/dev/simulator/day";
import type { SimProvider } from "@/lib/providers/simulation/script";
import { startSimulator } from "@/dev/simulator/server";
import type { TenantSecrets } from "@/dev/simulator/sign";

const SECRET_FLAGS: Record<SimProvider, string> = {
  stripe: "stripe-secret",
  standard: "standard-secret",
  adyen: "adyen-hmac-key",
  paystack: "paystack-secret-key",
  flutterwave: "flutterwave-hash",
  paypal: "paypal-webhook-id",
};

const USAGE =
  "npm run provider-sim -- --target http://localhost:3000 --tenant demo [--providers stripe,paystack,…] --stripe-secret whsec_… [--standard-secret whsec_…] [--adyen-hmac-key HEX] " +
  "[--paystack-secret-key sk_test_…] [--flutterwave-hash HASH] [--paypal-webhook-id WH-…] [--events 200] [--seed 1] [--drop 0.05] [--dup 0.2] [--port 4010] [--api-key sk_test_simulator] [--flutterwave-key FLWSECK_TEST-…] [--days-ago 1]";

function fail(message: string): never {
  console.error(`${message}\nUsage: ${USAGE}`);
  process.exit(2);
}

async function main() {
  let args;
  try {
    args = parseArgs({
      options: {
        target: { type: "string" },
        tenant: { type: "string" },
        providers: { type: "string", default: "stripe" },
        ...Object.fromEntries(Object.values(SECRET_FLAGS).map((flag) => [flag, { type: "string" as const }])),
        events: { type: "string", default: "200" },
        seed: { type: "string", default: "1" },
        drop: { type: "string", default: "0.05" },
        dup: { type: "string", default: "0.2" },
        port: { type: "string", default: "4010" },
        "api-key": { type: "string", default: "sk_test_simulator" },
        "flutterwave-key": { type: "string", default: "FLWSECK_TEST-simulator-X" },
        "days-ago": { type: "string", default: "0" },
      },
    }).values as Record<string, string | undefined>;
  } catch (e) {
    fail((e as Error).message);
  }
  if (!args.target || !args.tenant) fail("Missing --target or --tenant");
  let providers;
  try {
    providers = providersFromText(args.providers!);
  } catch (e) {
    fail(`--providers: ${(e as Error).message}`);
  }
  const names = (Array.isArray(providers) ? providers : Object.keys(providers)) as SimProvider[];
  const secrets: TenantSecrets = {};
  for (const provider of names) {
    const value = args[SECRET_FLAGS[provider]];
    if (!value) fail(`Missing --${SECRET_FLAGS[provider]} (the tenant's ${provider} secret)`);
    secrets[provider] = value;
  }
  const now = Date.now() - Number(args["days-ago"]) * 86_400_000;
  const dayStart = Math.floor(
    Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) / 1000,
  );
  const day = generateDay({
    seed: Number(args.seed),
    events: Number(args.events),
    tenants: [args.tenant],
    providers,
    dayStart,
    dropRate: Number(args.drop),
    retryRate: Number(args.dup),
  });
  const sim = await startSimulator({
    day,
    tenant: args.tenant,
    apiKey: args["api-key"],
    paystackKey: secrets.paystack,
    flutterwaveKey: args["flutterwave-key"],
    port: Number(args.port),
  });
  const date = new Date(dayStart * 1000).toISOString().slice(0, 10);
  console.log(`Simulator at ${sim.url} playing ${names.join(", ")}; ${day.movements.length} movements on ${date}`);
  if (names.includes("paypal"))
    console.log(
      `PayPal deliveries are signed with the simulator's certificate at ${sim.paypalCertUrl}: start Tally with TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES=${sim.url}/ (and TALLY_ALLOW_INSECURE_SIMULATORS=1 under npm start), or they are refused`,
    );
  if (names.includes("paypal"))
    console.log(
      `PayPal captures and refunds are confirmed here first: npm run tally -- endpoint set --tenant ${args.tenant} --provider paypal --setting apiBaseUrl=${sim.url} --setting clientId=${sim.paypalClientId} --setting clientSecret=${sim.paypalClientSecret}`,
    );
  if (names.includes("flutterwave"))
    console.log(
      `Flutterwave payments are confirmed here first: npm run tally -- endpoint set --tenant ${args.tenant} --provider flutterwave --setting apiBaseUrl=${sim.url} --setting secretKey=${sim.flutterwaveKey}`,
    );
  const report = await sim.deliver(args.target, secrets);
  console.log(
    JSON.stringify({ ...report, dropped: report.dropped.length, droppedReferences: report.dropped }, null, 2),
  );
  if (names.includes("stripe"))
    console.log(
      `Point the tenant's stripe endpoint at it (settings apiBaseUrl=${sim.url}, apiKey=${sim.apiKey}) and run: npm run tally -- recon run --tenant ${args.tenant} --provider stripe --date ${date}`,
    );
  if (names.includes("paystack"))
    console.log(
      `Point the tenant's paystack endpoint at it (settings apiBaseUrl=${sim.url}, apiKey=<the paystack secret key>) and run: npm run tally -- recon run --tenant ${args.tenant} --provider paystack --date ${date}`,
    );
  const stop = () => sim.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
