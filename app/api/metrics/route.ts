// GET /api/metrics: Prometheus text format for this web process.
import { metrics } from "@/lib/platform/metrics";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const { registry } = metrics();
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
}
