// GET /api/health: 200 when the database answers, 503 when it does not.
import { prisma } from "@/lib/platform/db";
import { json } from "@/lib/platform/http";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const started = performance.now();
  try {
    await prisma.$queryRaw`SELECT 1`;
    return json({ status: "ok", database: "up", latencyMs: Math.round(performance.now() - started) });
  } catch {
    return json({ status: "unavailable", database: "down" }, { status: 503 });
  }
}
