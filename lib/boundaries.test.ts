// The product does not depend on its tooling: nothing the web app or the worker
// loads imports dev/ (simulator, test helpers, replay, demo). Tests may, and so
// may the processes that exist for tooling (workers/start.ts runs the demo,
// workers/replay.ts and workers/provider-sim.ts are tools).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const PRODUCT_DIRS = ["app", "components", "lib"];
// The CLI (workers/tally.ts) is left out on purpose: its `day generate` is the
// replay's day generator.
const PRODUCT_FILES = ["workers/worker.ts"];
const SKIP = new Set(["node_modules", "generated", ".next"]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (SKIP.has(name)) return [];
    if (statSync(full).isDirectory()) return sources(full);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name) ? [full] : [];
  });
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)) found.push(m[1]!);
  return found;
}

function reachesDev(file: string, spec: string): boolean {
  if (spec.startsWith("@/dev/") || spec === "@/dev") return true;
  if (!spec.startsWith(".")) return false;
  const target = path.relative(ROOT, path.resolve(path.dirname(file), spec));
  return target === "dev" || target.startsWith(`dev${path.sep}`);
}

describe("the product's boundary", () => {
  it("finds imports in every form a module can be imported", () => {
    const text = `import a from "@/dev/x";\nimport type { B } from '@/dev/y';\nexport { c } from "../dev/z";\nconst d = await import("@/dev/w");\nimport "@/dev/side-effect";`;
    expect(specifiers(text)).toEqual(["@/dev/x", "@/dev/y", "../dev/z", "@/dev/w", "@/dev/side-effect"]);
    expect(reachesDev(path.join(ROOT, "lib/x.ts"), "../dev/z")).toBe(true);
  });

  it("nothing the web app or the worker loads imports dev/", () => {
    const files = [
      ...PRODUCT_DIRS.flatMap((d) => sources(path.join(ROOT, d))),
      ...PRODUCT_FILES.map((f) => path.join(ROOT, f)),
    ];
    expect(files.length).toBeGreaterThan(100);
    const offences = files.flatMap((file) =>
      specifiers(readFileSync(file, "utf8"))
        .filter((spec) => reachesDev(file, spec))
        .map((spec) => `${path.relative(ROOT, file)} imports ${spec}`),
    );
    expect(offences).toEqual([]);
  });
});
