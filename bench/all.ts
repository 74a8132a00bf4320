// npm run bench: every benchmark in turn, then one dated file with all results.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { machine } from "@/bench/support";

const benches = ["ack", "worker", "recon", "scale", "day"];
const outcomes: Record<string, { exitCode: number | null; result: unknown }> = {};
for (const name of benches) {
  console.log(`\n=== bench:${name} ===`);
  const r = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { stdio: "inherit", env: { ...process.env, TALLY_BENCH_SKIP_BUILD: name === "ack" ? "" : "1" } });
  const file = path.join("bench", "results", `${name}.json`);
  outcomes[name] = { exitCode: r.status, result: existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null };
}
const date = new Date().toISOString().slice(0, 10);
const out = path.join("bench", "results", `${date}.json`);
writeFileSync(out, JSON.stringify({ date, machine: machine(), benches: outcomes }, null, 2) + "\n");
console.log(`\nwrote ${out}`);
