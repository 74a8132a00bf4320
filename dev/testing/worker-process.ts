// Real worker processes for crash and concurrency tests: started with tsx,
// watched through their JSON log lines, killed with real signals.
import { spawn, type ChildProcess } from "node:child_process";

export type WorkerProcess = {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  waitFor(event: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export function startWorkerProcess(env: Record<string, string> = {}, script = "workers/worker.ts"): WorkerProcess {
  // node --import tsx, not the tsx CLI: the CLI runs the script in a child process,
  // which a SIGKILL to the parent would leave running.
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    env: { ...process.env, TALLY_WORKER_POLL_MS: "100", TALLY_OUTBOX_POLL_MS: "100", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const listeners = new Set<() => void>();
  let buffer = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part));
      } catch {
        lines.push({ event: "text", text: part });
      }
    }
    for (const l of listeners) l();
  });
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    waitFor(event, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find((l) => l.event === event);
          if (!hit) return false;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(
              `worker never logged ${event} within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}; log: ${JSON.stringify(lines.slice(-5))}`,
            ),
          );
        }, timeoutMs);
        if (!check()) listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check) && !check()) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`worker exited before logging ${event}; stderr: ${stderr.slice(-2000)}`));
          }
        });
      });
    },
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
