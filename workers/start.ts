// `npm start`: the whole product on one machine. Database (embedded unless
// DATABASE_URL is set), migrations, demo data, the web app and the worker,
// supervised: a crashed child is restarted, Ctrl-C stops everything. The live
// demo (a provider simulator and, on first start, a reconciled day) runs here too.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { config } from "@/lib/platform/config";
import { closeDb } from "@/lib/platform/db";
import { prepareDatabase } from "@/lib/platform/database-runtime";
import { seedDemo } from "@/dev/demo";
import { startLiveDemo } from "@/dev/demo-live";
import { defaultDataDir } from "@/lib/platform/embedded-postgres";
import { keyFileFor } from "@/lib/platform/secrets-at-rest";

const root = process.cwd();
const port = config().PORT;
const bin = (name: string) => path.join(root, "node_modules", ".bin", name);

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".") || entry.name === "generated") continue;
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds the web app unless the last build is newer than every source file. */
function buildIfStale(): void {
  const buildId = path.join(root, ".next", "BUILD_ID");
  const built = existsSync(buildId) ? statSync(buildId).mtimeMs : 0;
  const sources = Math.max(
    ...["app", "components", "lib"].map((d) => newestSource(path.join(root, d))),
    ...["next.config.ts", "proxy.ts"].map((f) => statSync(path.join(root, f)).mtimeMs),
  );
  if (built > sources) return;
  console.log("[start] building the web app (next build)…");
  const r = spawnSync(bin("next"), ["build"], {
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error("next build failed");
}

type Child = {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  process?: ChildProcess;
  restarts: number;
};
let stopping = false;

function launch(child: Child, env: NodeJS.ProcessEnv): void {
  const p = spawn(child.command, child.args, { stdio: ["ignore", "pipe", "pipe"], env: { ...env, ...child.env } });
  child.process = p;
  const prefix = (line: string) => `[${child.name}] ${line}`;
  for (const stream of [p.stdout!, p.stderr!]) {
    let buffer = "";
    stream.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) console.log(prefix(line));
    });
  }
  p.on("exit", (code, signal) => {
    if (stopping) return;
    child.restarts++;
    const delay = Math.min(30_000, 500 * 2 ** Math.min(child.restarts, 6));
    console.log(prefix(`exited (${signal ?? code}); restarting in ${delay} ms`));
    setTimeout(() => launch(child, env), delay);
  });
}

async function main() {
  const c = config();
  const db = await prepareDatabase({
    log: (l) => {
      if (/error|FATAL/i.test(l)) console.log(`[postgres] ${l}`);
    },
  });
  if (db.applied.length) console.log(`[start] applied migrations: ${db.applied.join(", ")}`);
  const dataDir = c.DATABASE_URL ? path.join(root, ".tally") : path.dirname(defaultDataDir(c.TALLY_DATA_DIR));
  const demo = await seedDemo(path.join(dataDir, "demo-credentials.json"));
  await closeDb();
  buildIfStale();

  // The children get DATABASE_URL, so they cannot find the embedded default's key file
  // themselves: they get the key this process uses (from TALLY_ENCRYPTION_KEY or the file).
  // With a DATABASE_URL of the operator's, the key is theirs to set (the processes refuse without it).
  const encryptionKey =
    c.TALLY_ENCRYPTION_KEY ?? (c.DATABASE_URL ? undefined : keyFileFor(path.dirname(defaultDataDir(c.TALLY_DATA_DIR))));
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    ...(encryptionKey ? { TALLY_ENCRYPTION_KEY: encryptionKey } : {}),
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
    // Both processes are production, as next start is: fault hooks refused, and provider APIs,
    // PayPal certificates and identity providers only at their real hosts (lib/providers/api-base.ts)...
    NODE_ENV: "production" as const,
    // ...except that the live demo's Stripe is a simulator on this machine, so with the demo on
    // simulators are allowed (TALLY_DEMO_SIMULATOR=0 wherever real money arrives).
    ...(c.TALLY_DEMO_SIMULATOR && !c.TALLY_ALLOW_INSECURE_SIMULATORS ? { TALLY_ALLOW_INSECURE_SIMULATORS: "1" } : {}),
  };
  // workers/web.ts is `next start` plus the connection's peer address (see there).
  const children: Child[] = [
    {
      name: "web",
      command: process.execPath,
      args: ["--import", "tsx", "workers/web.ts"],
      restarts: 0,
    },
  ];
  // node --import tsx keeps the worker one process, so signals reach it directly.
  children.push({
    name: "worker",
    command: process.execPath,
    args: ["--import", "tsx", "workers/worker.ts"],
    restarts: 0,
  });
  for (const child of children) launch(child, env);

  const base = `http://localhost:${port}`;
  const live = c.TALLY_DEMO_SIMULATOR
    ? await startLiveDemo({
        creds: demo,
        webUrl: base,
        port: c.TALLY_DEMO_SIM_PORT,
        log: (l) => console.log(`[demo] ${l}`),
      })
    : null;
  live?.played.catch((error) =>
    console.log(`[demo] the demo day could not be played: ${error instanceof Error ? error.message : error}`),
  );
  console.log(`
Tally is starting on ${base}
  database      ${c.DATABASE_URL ? "DATABASE_URL" : `embedded PostgreSQL (data in ${defaultDataDir(c.TALLY_DATA_DIR)})`}
  webhooks      ${base}/api/webhooks/${demo.tenant}/stripe    secret ${demo.secrets.stripe}
                ${base}/api/webhooks/${demo.tenant}/standard  secret ${demo.secrets.standard}
  health        ${base}/api/health      metrics ${base}/api/metrics
  demo provider ${live ? `${live.simulator.url} plays Stripe for "${demo.tenant}" (settlement API; simulators allowed while it runs; TALLY_DEMO_SIMULATOR=0 turns it off)` : "off"}
  sign in       ${base}/login
${demo.users.map((u) => `                ${u.role.padEnd(10)} ${u.email.padEnd(26)} ${u.password}`).join("\n")}
Stop with Ctrl-C.`);

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[start] ${signal}: stopping`);
    await Promise.all(
      children.map(
        (ch) =>
          new Promise<void>((resolve) => {
            if (!ch.process || ch.process.exitCode !== null) return resolve();
            ch.process.once("exit", () => resolve());
            ch.process.kill("SIGTERM");
            setTimeout(() => ch.process?.kill("SIGKILL"), 10_000).unref();
          }),
      ),
    );
    await live?.simulator.close();
    await closeDb();
    await db.embedded?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  console.error("[start] failed:", error instanceof Error ? error.message : error);
  process.exit(1);
});
