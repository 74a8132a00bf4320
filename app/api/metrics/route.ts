// GET /api/metrics: Prometheus text format for this web process. Behind a bearer
// token when TALLY_METRICS_TOKEN is set: the counters name providers, rejection
// reasons and volumes, which are nobody else's business.
import { createHash, timingSafeEqual } from "node:crypto";
import { config } from "@/lib/platform/config";
import { jsonError } from "@/lib/platform/http";
import { metrics } from "@/lib/platform/metrics";

export const dynamic = "force-dynamic";

// Digests of equal length, so the comparison takes as long whatever the guess and however long it is.
const digest = (s: string) => createHash("sha256").update(s).digest();

function authorised(request: Request, token: string): boolean {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "");
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

export async function GET(request: Request): Promise<Response> {
  const token = config().TALLY_METRICS_TOKEN;
  if (token !== undefined && !authorised(request, token)) {
    return jsonError(401, "unauthenticated", "Metrics need 'Authorization: Bearer <TALLY_METRICS_TOKEN>'", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  }
  const { registry } = metrics();
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
}
