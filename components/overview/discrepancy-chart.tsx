"use client";
// The daily discrepancy count per provider, stacked, with the 7-day moving
// average of the total as a line. Days never reconciled are gaps, not zeros.
// The same numbers are in a table below the chart for screen readers and for
// anyone who wants the exact figures.
import { Area, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export type ChartDay = { day: string; total: number | null; byProvider: Record<string, number | null>; average7: number | null };

// Distinguishable with common colour-vision deficiencies; the legend names them too.
const COLOURS = ["#1f5fbf", "#c76b00", "#1c7c46", "#8e3cb4", "#a0302a", "#0f7d88"];

export function DiscrepancyChart({ days, providers, caption }: { days: ChartDay[]; providers: string[]; caption: string }) {
  const data = days.map((d) => ({ day: d.day, average7: d.average7, ...Object.fromEntries(providers.map((p) => [p, d.byProvider[p] ?? null])) }));
  return (
    <figure className="chart" data-testid="discrepancy-chart">
      <div role="img" aria-label={caption} className="chart-canvas">
        <ResponsiveContainer width="100%" height={300}>
          <ComposedChart data={data} margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
            <CartesianGrid stroke="#e2e2dd" vertical={false} />
            <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} minTickGap={24} tick={{ fontSize: 12 }} />
            <YAxis allowDecimals={false} width={40} tick={{ fontSize: 12 }} />
            <Tooltip />
            <Legend />
            {providers.map((p, i) => (
              <Area key={p} type="linear" dataKey={p} name={`${p} discrepancies`} stackId="providers" stroke={COLOURS[i % COLOURS.length]} fill={COLOURS[i % COLOURS.length]} fillOpacity={0.25} isAnimationActive={false} />
            ))}
            <Line type="linear" dataKey="average7" name="7-day average (all providers)" stroke="#1d1f23" strokeWidth={2.5} dot={false} connectNulls isAnimationActive={false} />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="muted small">{caption}</figcaption>
    </figure>
  );
}
