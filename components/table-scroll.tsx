// A wide table scrolls inside itself on a narrow screen instead of pushing the
// whole page sideways. The scrolling box is a named, focusable region so a
// keyboard user can scroll it too (axe: scrollable-region-focusable).
import type { ReactNode } from "react";

export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
