// Calls the real route handler, as Next.js does, without an HTTP server.
import { POST } from "@/app/api/webhooks/[tenant]/[provider]/route";

export function deliver(request: Request): Promise<Response> {
  const [, , tenant, provider] = new URL(request.url).pathname.split("/").slice(1);
  return POST(request, { params: Promise.resolve({ tenant: tenant!, provider: provider! }) });
}
