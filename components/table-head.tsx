// The header row of every data table on the dashboard: one <th scope="col"> a
// column, so screen readers name each cell by its column, and numeric columns
// right-aligned (class "num") so they line up with their figures. Fifteen tables
// wrote this row out by hand; the columns are now data and the markup lives here once.
import type { ReactNode } from "react";

/** A column's header: its label, or `num(label)` for a right-aligned numeric column. */
export type Column = ReactNode | { num: ReactNode };

export const num = (label: ReactNode): Column => ({ num: label });

/** The label of a column whose header names no visible text (row actions), read out by screen readers only. */
export const ACTIONS = <span className="visually-hidden">Actions</span>;

const isNum = (c: Column): c is { num: ReactNode } => typeof c === "object" && c !== null && "num" in c;

export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) => {
          // A header's columns are fixed for the render and never reorder: the position is the column's identity.
          const key = `col-${i}`;
          return isNum(c) ? (
            <th key={key} scope="col" className="num">
              {c.num}
            </th>
          ) : (
            <th key={key} scope="col">
              {c}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
