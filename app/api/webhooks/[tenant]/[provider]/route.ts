// POST /api/webhooks/{tenant}/{provider}: verify, insert, 200. Nothing else.
import { handled, jsonError, methodNotAllowed } from "@/lib/platform/http";
import { ingestWebhook } from "@/lib/pipeline/ingest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ tenant: string; provider: string }> };

export const POST = handled(async (request: Request, { params }: Params) => {
  const { tenant, provider } = await params;
  const outcome = await ingestWebhook({ tenant, provider, headers: request.headers, body: request.body });
  if (!outcome.ok) return jsonError(outcome.status, outcome.reason, outcome.message);
  return new Response(outcome.acknowledgement.body, {
    status: 200,
    headers: { "content-type": outcome.acknowledgement.contentType },
  });
});

export const GET = methodNotAllowed(["POST"]);
export const PUT = GET;
export const PATCH = GET;
export const DELETE = GET;
