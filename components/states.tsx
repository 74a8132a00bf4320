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
