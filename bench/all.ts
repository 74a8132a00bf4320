// npm run bench: every benchmark in turn, then one dated file with all results.
// `npm run bench -- --collect` only gathers the latest result of each into that file.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { machine } from "@/bench/support";

const benches = ["ack", "cpu", "worker", "recon", "scale", "day"];
const collectOnly = process.argv.includes("--collect");
const outcomes: Record<string, { exitCode: number | null; result: unknown }> = {};
for (const name of [...benches, ...(collectOnly ? ["replay-day"] : [])]) {
  let exitCode: number | null = null;
  if (!collectOnly) {
    console.log(`\n=== bench:${name} ===`);
    exitCode = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], {
      stdio: "inherit",
      env: { ...process.env, TALLY_BENCH_SKIP_BUILD: name === "ack" ? "" : "1" },
    }).status;
  }
  const file = path.join("bench", "results", `${name}.json`);
  outcomes[name] = { exitCode, result: existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null };
}
const date = new Date().toISOString().slice(0, 10);
const out = path.join("bench", "results", `${date}.json`);
writeFileSync(out, `${JSON.stringify({ date, machine: machine(), benches: outcomes }, null, 2)}\n`);
console.log(`\nwrote ${out}`);
