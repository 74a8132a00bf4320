"use client";
// The daily discrepancy count, three ways. By provider: one area each (overlaid,
// not stacked), so a day a provider was not reconciled breaks its own area rather
// than leaving a white wedge in another's; the day is hatched and named "not
// reconciled" (legend and tooltip). By kind and by cause: one bar a day, stacked by
// what was found (theirs-not-ours, ours-not-theirs, mismatch) or why (never
// delivered, parse failed, fee, …); a day no provider was reconciled is hatched.
// Every view has the 7-day average of the total as a line, and a red diamond over
// each day whose rate was above its control limit. The same numbers are in a table
// below the chart for screen readers and for exact figures.
import {
  Area,
  Bar,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ResponsiveContainer,
  Scatter,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

export type Kind = "theirsNotOurs" | "oursNotTheirs" | "mismatched" | "other";

export type ChartDay = {
  day: string;
  total: number | null;
  byProvider: Record<string, number | null>;
  byKind: Record<Kind, number> | null;
  byCause: Record<string, number> | null;
  average7: number | null;
  breaches: { provider: string; text: string }[];
};

export type ChartView = "provider" | "kind" | "cause";

// Distinguishable with common colour-vision deficiencies; the legend names them too.
const COLOURS = ["#1f5fbf", "#c76b00", "#1c7c46", "#8e3cb4", "#a0302a", "#0f7d88"];
// Okabe–Ito's palette, darkened where a thin bar would fall under 3:1 against white.
const KIND_STYLE: Record<Kind, { label: string; colour: string }> = {
  theirsNotOurs: { label: "theirs, not ours", colour: "#0072b2" },
  oursNotTheirs: { label: "ours, not theirs", colour: "#b36b00" },
  mismatched: { label: "mismatch", colour: "#b0487f" },
  other: { label: "payout or bank", colour: "#4d4d4d" },
};
export const CAUSE_STYLE: Record<string, { label: string; colour: string }> = {
  NEVER_DELIVERED: { label: "never delivered", colour: "#0072b2" },
  SIGNATURE_REFUSED: { label: "signature refused", colour: "#c2410c" },
  PARSE_FAILED: { label: "parse failed", colour: "#b0487f" },
  CONFLICT: { label: "conflict", colour: "#6b2d91" },
  LATE: { label: "late", colour: "#b36b00" },
  MISSING_AT_PROVIDER: { label: "missing at provider", colour: "#00795a" },
  AMOUNT_DIFFERS: { label: "amount differs", colour: "#3a8fc4" },
  FEE: { label: "fee", colour: "#7a5c12" },
  PAYOUT_RESIDUAL: { label: "payout residual", colour: "#4d4d4d" },
  BANK: { label: "bank", colour: "#0f7d88" },
};
export const causeLabel = (cause: string) => CAUSE_STYLE[cause]?.label ?? cause.toLowerCase().replace(/_/g, " ");
export const KINDS = Object.keys(KIND_STYLE) as Kind[];
export const kindLabel = (kind: Kind) => KIND_STYLE[kind].label;

const NOT_RECONCILED = "not reconciled";
const BREACH = "above control limit";
const BREACH_COLOUR = "#c4001a";

/** The stacked series of a bar view: key in the day's record, legend label, colour. */
function stackedSeries(view: "kind" | "cause", causes: string[]) {
  return view === "kind"
    ? KINDS.map((k) => ({ key: k, label: KIND_STYLE[k].label, colour: KIND_STYLE[k].colour }))
    : causes.map((c) => ({ key: c, label: causeLabel(c), colour: CAUSE_STYLE[c]?.colour ?? "#4d4d4d" }));
}

/**
 * Per day, the view's values (null when not reconciled), a full-height hatch where
 * the view cannot show the day, and the breach marker's height (the breached
 * provider's count, or the day's total in a stacked view).
 */
export function chartRows(days: ChartDay[], providers: string[], view: ChartView = "provider", causes: string[] = []) {
  const top = Math.max(
    1,
    ...days.flatMap((d) =>
      view === "provider" ? providers.map((p) => d.byProvider[p] ?? 0) : [d.total ?? 0, d.average7 ?? 0],
    ),
    ...days.map((d) => d.average7 ?? 0),
  );
  return days.map((d) => {
    const missing = providers.filter((p) => d.byProvider[p] === null || d.byProvider[p] === undefined);
    const breachAt = !d.breaches.length
      ? null
      : view === "provider"
        ? Math.max(...d.breaches.map((b) => d.byProvider[b.provider] ?? 0))
        : (d.total ?? 0);
    const values =
      view === "provider"
        ? Object.fromEntries(providers.map((p) => [p, d.byProvider[p] ?? null]))
        : Object.fromEntries(
            stackedSeries(view, causes).map((s) => {
              const counts = (view === "kind" ? d.byKind : d.byCause) as Record<string, number> | null;
              return [s.key, counts ? (counts[s.key] ?? 0) : null];
            }),
          );
    const hatched = view === "provider" ? missing.length > 0 : missing.length === providers.length;
    return {
      day: d.day,
      average7: d.average7,
      ...values,
      [NOT_RECONCILED]: hatched ? top : null,
      missing: missing.length === providers.length ? "every provider" : missing.join(", "),
      [BREACH]: breachAt,
      breachText: d.breaches.map((b) => b.text).join("; "),
    };
  });
}

/** A diamond: the breach marker, distinct from every bar and area by shape as well as colour. */
function Diamond(props: { cx?: number; cy?: number; payload?: Record<string, unknown> }) {
  // Recharts places a point for every day, a day without a breach (null) at the top: drawn nowhere.
  if (props.cx === undefined || props.cy === undefined || typeof props.payload?.[BREACH] !== "number") return null;
  const { cx, cy } = props;
  const r = 7;
  return (
    <path
      className="breach-marker"
      d={`M${cx},${cy - r - 4} l${r},${r} l${-r},${r} l${-r},${-r} z`}
      fill={BREACH_COLOUR}
      stroke="#fff"
      strokeWidth={1.5}
    />
  );
}

export function DiscrepancyChart({
  days,
  providers,
  causes = [],
  view = "provider",
  caption,
}: {
  days: ChartDay[];
  providers: string[];
  causes?: string[];
  view?: ChartView;
  caption: string;
}) {
  const data = chartRows(days, providers, view, causes);
  return (
    <figure className="chart" data-testid="discrepancy-chart" data-view={view}>
      {/* role=img with the caption as its name; no tab stop inside (accessibilityLayer off): keyboard and
          screen-reader users get the exact figures from the table below instead of a nameless focus stop. */}
      <div role="img" aria-label={caption} className="chart-canvas">
        <ResponsiveContainer width="100%" height={300}>
          <ComposedChart
            data={data}
            margin={{ top: 16, right: 12, bottom: 4, left: 0 }}
            barCategoryGap={view === "provider" ? 0 : 1}
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
              formatter={(value, name, item) => {
                const row = item.payload as { missing: string; breachText: string };
                if (name === NOT_RECONCILED) return [row.missing, NOT_RECONCILED];
                if (name === BREACH) return [row.breachText, BREACH];
                return [value, name];
              }}
            />
            <Legend />
            {view === "provider" ? (
              <>
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
              </>
            ) : (
              <>
                {/* One stack: the hatch fills a day no provider was reconciled, where every series is null. */}
                <Bar
                  dataKey={NOT_RECONCILED}
                  name={NOT_RECONCILED}
                  stackId="day"
                  fill="url(#not-reconciled-hatch)"
                  isAnimationActive={false}
                  legendType="square"
                />
                {stackedSeries(view, causes).map((s) => (
                  <Bar
                    key={s.key}
                    dataKey={s.key}
                    name={s.label}
                    stackId="day"
                    fill={s.colour}
                    isAnimationActive={false}
                    legendType="square"
                  />
                ))}
              </>
            )}
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
            <Scatter
              dataKey={BREACH}
              name={BREACH}
              fill={BREACH_COLOUR}
              shape={<Diamond />}
              legendType="diamond"
              isAnimationActive={false}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="muted small">{caption}</figcaption>
    </figure>
  );
}
