import { describe, expect, it } from "vitest";
import { aboveControlLimit, controlChart, trendVerdict } from "@/lib/recon/trend";

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

/** Days counted back from 2026-11-30: [days before, compared, discrepancies]. */
const history = (days: [number, number, number][]) =>
  days.map(([ago, compared, discrepancies]) => ({
    day: new Date(Date.UTC(2026, 10, 30 - ago)).toISOString().slice(0, 10),
    compared,
    discrepancies,
  }));
const judge = (days: [number, number, number][]) => controlChart(history(days)).find((j) => j.day === "2026-11-30")!;
// Seven prior days, 10 discrepancies in 100 compared: p̄ = 0.1.
const sevenDays: [number, number, number][] = [
  [1, 10, 1],
  [2, 10, 1],
  [3, 10, 1],
  [4, 10, 1],
  [5, 20, 2],
  [6, 20, 2],
  [7, 20, 2],
];

describe("the control limit (p-chart)", () => {
  it("puts a day exactly at p̄ + 3·sqrt(p̄(1 − p̄)/n) within the limit, and one discrepancy more above it", () => {
    // n = 100: 0.1 + 3·sqrt(0.09/100) = 0.19, so 19 of 100 is at the limit.
    const at = judge([...sevenDays, [0, 100, 19]]);
    expect(at).toMatchObject({ status: "within", historyDays: 7, rate: 0.19 });
    expect(at.centre).toBeCloseTo(0.1, 12);
    expect(at.limit).toBeCloseTo(0.19, 12);
    expect(judge([...sevenDays, [0, 100, 20]])).toMatchObject({ status: "breach", rate: 0.2 });
    expect(aboveControlLimit({ discrepancies: 19, compared: 100 }, { D: 10, N: 100 })).toBe(false);
    expect(aboveControlLimit({ discrepancies: 20, compared: 100 }, { D: 10, N: 100 })).toBe(true);
  });

  it("widens the limit for a day that compared little: the same rate is noise on a small day and a breach on a big one", () => {
    // 20% on 25 compared: limit 0.1 + 3·sqrt(0.09/25) = 0.28. On 400 compared: 0.1 + 3·0.015 = 0.145.
    expect(judge([...sevenDays, [0, 25, 5]])).toMatchObject({ status: "within" });
    expect(judge([...sevenDays, [0, 25, 5]]).limit).toBeCloseTo(0.28, 12);
    expect(judge([...sevenDays, [0, 400, 80]])).toMatchObject({ status: "breach" });
    // Exactly at a small day's limit, then one over: 7 of 25 is 0.28; the limit uses the day's 25, not the history's 100.
    expect(judge([...sevenDays, [0, 25, 7]])).toMatchObject({ status: "within" });
    expect(judge([...sevenDays, [0, 25, 8]])).toMatchObject({ status: "breach" });
  });

  it("needs seven reconciled days among the thirty before; days with nothing compared neither count nor are judged", () => {
    expect(judge([...sevenDays.slice(1), [0, 100, 50]])).toMatchObject({
      status: "not_enough_history",
      historyDays: 6,
      centre: null,
      limit: null,
    });
    // A day with discrepancies but nothing compared (found outside a comparison) is no history.
    expect(judge([...sevenDays.slice(1), [8, 0, 3], [0, 100, 50]])).toMatchObject({ status: "not_enough_history" });
    expect(judge([...sevenDays, [0, 0, 4]])).toMatchObject({ status: "nothing_compared", rate: null });
  });

  it("excludes the day itself and days more than thirty before it from the baseline", () => {
    const clean: [number, number, number][] = sevenDays.map(([ago, compared]) => [ago, compared, 0]);
    // p̄ = 0 from the days before: one discrepancy is above it. Counting the day itself would make
    // p̄ = 1/200 and the limit about 0.02, and the day "within".
    expect(judge([...clean, [0, 100, 1]])).toMatchObject({ status: "breach", centre: 0 });
    // 31 days before is outside the window; 30 days before is inside.
    expect(judge([...clean, [31, 100, 100], [0, 100, 1]])).toMatchObject({ status: "breach", historyDays: 7 });
    expect(judge([...clean, [30, 100, 100], [0, 100, 1]])).toMatchObject({ status: "within", historyDays: 8 });
  });
});
