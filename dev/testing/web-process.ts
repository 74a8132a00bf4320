// A web process for load tests: the webhook route and the settlement report upload
// route behind real HTTP, in a process of its own (started by startWorkerProcess
// with this script), so that the load generator's CPU is not the server's and the
// event loop measured is the one serving. Logs {"event":"web.listening","url":…}.
import { POST as upload } from "@/app/api/v1/tenants/[tenant]/reconciliation/uploads/route";
import { deliver } from "@/dev/testing/route";
import { startRouteServer } from "@/dev/testing/route-server";

const server = await startRouteServer(async (request) => {
  const uploads = /^\/api\/v1\/tenants\/([^/]+)\/reconciliation\/uploads$/.exec(new URL(request.url).pathname);
  if (uploads) return upload(request, { params: Promise.resolve({ tenant: uploads[1]! }) });
  return deliver(request);
});
console.log(JSON.stringify({ event: "web.listening", url: server.url }));
