"use client";
// The signed-in shell's navigation: only the sections the role may use, the
// current one marked for screen readers (aria-current) and by style.
import Link from "next/link";
import { usePathname } from "next/navigation";

export type NavItem = { label: string; href: string };

export function Nav({ items }: { items: NavItem[] }) {
  const pathname = usePathname();
  const current = items.reduce<NavItem | null>(
    (best, i) =>
      (pathname === i.href || pathname.startsWith(`${i.href}/`)) && (!best || i.href.length > best.href.length)
        ? i
        : best,
    null,
  );
  return (
    <nav aria-label="Sections" className="nav">
      <ul>
        {items.map((i) => (
          <li key={i.href}>
            <Link href={i.href} aria-current={current === i ? "page" : undefined}>
              {i.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
