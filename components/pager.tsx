// The link to the next page of a list (older entries, more accounts), in the
// landmark every paged list uses so a screen reader can jump to it: five lists
// wrote this <nav> out by hand.
import Link from "next/link";
import type { ReactNode } from "react";

export function NextPage({ href, children }: { href: string; children: ReactNode }) {
  return (
    <nav aria-label="Pages" className="pager">
      <Link href={href}>{children}</Link>
    </nav>
  );
}
