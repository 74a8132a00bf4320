import { describe, expect, it } from "vitest";
import { domainError } from "@/lib/platform/http";
import { refuse } from "@/lib/platform/refusal";

describe("domainError", () => {
  it("answers each refusal with its own status, not a fallback 400", async () => {
    const cases = [
      ["nothing_to_correct", 409],
      ["no_posting", 409],
      ["own_proposal", 403],
      ["not_found", 404],
      ["too_large", 413],
      ["malformed_report", 422],
      ["rate_limited", 429],
      ["invalid_slug", 400],
    ] as const;
    for (const [reason, status] of cases) {
      const res = domainError(refuse(reason, `because ${reason}`));
      expect({ reason, status: res.status }).toEqual({ reason, status });
      expect(await res.json()).toEqual({ error: { code: reason, message: `because ${reason}` } });
    }
  });
});
