// Runs before route matching, and only for API paths holding a "%" (the matcher
// below): a webhook or API URL without one never enters it, so the
// acknowledgement path pays nothing for it.
import { type NextRequest, NextResponse } from "next/server";
import { malformedPathResponse } from "@/lib/platform/malformed-path";

export function proxy(request: NextRequest): Response {
  // request.url keeps the path as sent (still percent-encoded).
  return malformedPathResponse(new URL(request.url).pathname) ?? NextResponse.next();
}

export const config = { matcher: ["/api/:rest(.*%.*)"] };
