// Calls the real route handler, as Next.js does, without an HTTP server: a path
// whose percent-encoding is not UTF-8 is answered by proxy.ts's check (Next.js
// never calls the handler with it); other segments are decoded, as Next.js decodes params.
import { POST } from "@/app/api/webhooks/[tenant]/[provider]/route";
import { malformedPathResponse } from "@/lib/platform/malformed-path";

export async function deliver(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  const malformed = malformedPathResponse(path);
  if (malformed) return malformed;
  const [, , tenant, provider] = path.split("/").slice(1).map(decodeURIComponent);
  return POST(request, { params: Promise.resolve({ tenant: tenant!, provider: provider! }) });
}
