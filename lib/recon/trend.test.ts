import { describe, expect, it } from "vitest";
import { trendVerdict } from "@/lib/recon/trend";

const series = (values: number[]) =>
  values.map((discrepancies, i) => ({
    day: new Date(Date.UTC(2026, 10, 1 + i)).toISOString().slice(0, 10),
    discrepancies,
  }));

describe("the trend verdict", () => {
  it("reads a falling count as falling", () => {
    expect(trendVerdict(series([20, 18, 17, 15, 12, 11, 9, 8, 6, 5, 3, 2]))).toMatchObject({ verdict: "falling" });
  });
  it("reads a rising count as rising", () => {
    expect(trendVerdict(series([1, 2, 2, 3, 5, 6, 8, 9]))).toMatchObject({
      verdict: "rising",
      reading: expect.stringContaining("Find the cause"),
    });
  });
  it("reads a constant non-zero rate as a defect, not weather", () => {
    const v = trendVerdict(
      series(
        Array(30)
          .fill(4)
          .map((n, i) => n + (i % 3) - 1),
      ),
    );
    expect(v.verdict).toBe("flat");
    expect(v.reading).toContain("A constant rate is a defect");
  });
  it("reads zero as the goal", () => {
    expect(trendVerdict(series(Array(30).fill(0)))).toMatchObject({
      verdict: "flat",
      reading: expect.stringContaining("Flat at zero"),
    });
  });
  it("fits over the days reconciled, not over missing days", () => {
    const gappy = [
      { day: "2026-11-01", discrepancies: 10 },
      { day: "2026-11-15", discrepancies: 5 },
      { day: "2026-11-30", discrepancies: 0 },
    ];
    const v = trendVerdict(gappy);
    expect(v.verdict).toBe("falling");
    expect(v.slopePerDay).toBeCloseTo(-10 / 29, 2);
  });
  it("says what to do with no data", () => {
    expect(trendVerdict([])).toMatchObject({ days: 0, reading: expect.stringContaining("run a reconciliation") });
  });
});
