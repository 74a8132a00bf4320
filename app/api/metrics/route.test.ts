import { afterEach, describe, expect, it } from "vitest";
import { GET } from "@/app/api/metrics/route";
import { resetConfigForTests } from "@/lib/platform/config";

const TOKEN = "metrics-token-0123456789abcdef";
const scrape = (authorization?: string) =>
  GET(new Request("http://tally.test/api/metrics", { headers: authorization ? { authorization } : {} }));

afterEach(() => {
  delete process.env.TALLY_METRICS_TOKEN;
  resetConfigForTests();
});

describe("GET /api/metrics", () => {
  it("is open when TALLY_METRICS_TOKEN is unset", async () => {
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("tally_webhook");
  });

  it("with TALLY_METRICS_TOKEN set, answers 401 without the right bearer and the metrics with it", async () => {
    process.env.TALLY_METRICS_TOKEN = TOKEN;
    resetConfigForTests();
    for (const authorization of [
      undefined,
      "Bearer",
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}x`,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      TOKEN,
      `Bearer  ${TOKEN} extra`,
    ]) {
      const res = await scrape(authorization);
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(await res.text()).not.toContain("tally_");
    }
    const ok = await scrape(`Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("tally_webhook");
  });

  it("refuses a token too short to guard anything", async () => {
    process.env.TALLY_METRICS_TOKEN = "short";
    resetConfigForTests();
    await expect(scrape()).rejects.toThrow(/TALLY_METRICS_TOKEN/);
  });
});
