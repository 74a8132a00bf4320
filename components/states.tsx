// Empty, refused and error states that tell the reader what to do next.
import type { ReactNode } from "react";

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <section className="empty" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function NoAccess({ role, section }: { role: string; section: string }) {
  return (
    <EmptyState title="Not available for your role">
      <p>
        {section} is not open to the <strong>{role}</strong> role. Ask an admin if you need it.
      </p>
    </EmptyState>
  );
}

/**
 * A list that came back empty because of its filters, never to be confused with
 * one that has nothing yet: says so, and offers the unfiltered list.
 */
export function NothingMatches({
  what,
  clearHref,
  children,
}: {
  what: string;
  clearHref: string;
  children?: ReactNode;
}) {
  return (
    <section className="empty" aria-label={`No ${what} match these filters`} data-testid="nothing-matches">
      <h2>No {what} match these filters</h2>
      {children}
      <p>
        <a href={clearHref}>Clear the filters</a> to see every one.
      </p>
    </section>
  );
}

/** Above a live list: what the person's last action did, and a refresh that failed (the list may be stale). */
export function ListNotices({ done, error }: { done: string | null; error: Error | null }) {
  return (
    <>
      {done && (
        <p role="status" className="notice">
          {done}
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          Could not refresh: {error.message}. The list may be stale; it retries every 10 s.
        </p>
      )}
    </>
  );
}
