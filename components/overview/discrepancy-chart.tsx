"use client";
// The daily discrepancy count per provider, one area each (overlaid, not
// stacked), with the 7-day moving average of the total as a line. A day a
// provider was not reconciled is unknown, not zero: its area breaks there, and
// the day is hatched and named "not reconciled" (in the legend and the
// tooltip), so a gap reads as "not reconciled" rather than as a hole in another
// provider's series (stacking put a white wedge there). The same numbers are
// in a table below the chart for screen readers and for exact figures.
import {
  Area,
  Bar,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

export type ChartDay = {
  day: string;
  total: number | null;
  byProvider: Record<string, number | null>;
  average7: number | null;
};

// Distinguishable with common colour-vision deficiencies; the legend names them too.
const COLOURS = ["#1f5fbf", "#c76b00", "#1c7c46", "#8e3cb4", "#a0302a", "#0f7d88"];
const NOT_RECONCILED = "not reconciled";

/** Per day: each provider's count (null when not reconciled), and a full-height hatch when any provider was not. */
export function chartRows(days: ChartDay[], providers: string[]) {
  const top = Math.max(
    1,
    ...days.flatMap((d) => providers.map((p) => d.byProvider[p] ?? 0)),
    ...days.map((d) => d.average7 ?? 0),
  );
  return days.map((d) => {
    const missing = providers.filter((p) => d.byProvider[p] === null || d.byProvider[p] === undefined);
    return {
      day: d.day,
      average7: d.average7,
      ...Object.fromEntries(providers.map((p) => [p, d.byProvider[p] ?? null])),
      [NOT_RECONCILED]: missing.length ? top : null,
      missing: missing.length === providers.length ? "every provider" : missing.join(", "),
    };
  });
}

export function DiscrepancyChart({
  days,
  providers,
  caption,
}: {
  days: ChartDay[];
  providers: string[];
  caption: string;
}) {
  const data = chartRows(days, providers);
  return (
    <figure className="chart" data-testid="discrepancy-chart">
      {/* role=img with the caption as its name; no tab stop inside (accessibilityLayer off): keyboard and
          screen-reader users get the exact figures from the table below instead of a nameless focus stop. */}
      <div role="img" aria-label={caption} className="chart-canvas">
        <ResponsiveContainer width="100%" height={300}>
          <ComposedChart
            data={data}
            margin={{ top: 8, right: 12, bottom: 4, left: 0 }}
            barCategoryGap={0}
            accessibilityLayer={false}
          >
            <defs>
              <pattern
                id="not-reconciled-hatch"
                width="6"
                height="6"
                patternUnits="userSpaceOnUse"
                patternTransform="rotate(45)"
              >
                <rect width="6" height="6" fill="#f1f1ee" />
                <line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a93" strokeWidth="2" />
              </pattern>
            </defs>
            <CartesianGrid stroke="#e2e2dd" vertical={false} />
            <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} minTickGap={24} tick={{ fontSize: 12 }} />
            <YAxis allowDecimals={false} width={40} tick={{ fontSize: 12 }} />
            <Tooltip
              formatter={(value, name, item) =>
                name === NOT_RECONCILED
                  ? [(item.payload as { missing: string }).missing, NOT_RECONCILED]
                  : [value, name]
              }
            />
            <Legend />
            <Bar
              dataKey={NOT_RECONCILED}
              name={NOT_RECONCILED}
              fill="url(#not-reconciled-hatch)"
              isAnimationActive={false}
              legendType="square"
            />
            {providers.map((p, i) => (
              <Area
                key={p}
                type="linear"
                dataKey={p}
                name={`${p} discrepancies`}
                stroke={COLOURS[i % COLOURS.length]}
                fill={COLOURS[i % COLOURS.length]}
                fillOpacity={0.2}
                strokeWidth={2}
                isAnimationActive={false}
              />
            ))}
            <Line
              type="linear"
              dataKey="average7"
              name="7-day average (all providers)"
              stroke="#1d1f23"
              strokeWidth={2.5}
              dot={false}
              connectNulls
              isAnimationActive={false}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="muted small">{caption}</figcaption>
    </figure>
  );
}
