// The signed-in shell for one tenant: nav (only what the role may use), tenant
// switcher, who is signed in and sign-out. Pages check their own section.
import Link from "next/link";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { Nav } from "@/components/nav";
import { Providers } from "@/components/providers";
import { SignOutButton } from "@/components/sign-out-button";
import { TenantSwitcher } from "@/components/tenant-switcher";
import { visibleTenants } from "@/lib/auth/access";
import { requireUser } from "@/lib/auth/page-access";
import { mayUse, NAV } from "@/lib/auth/roles";

export const dynamic = "force-dynamic";

export default async function TenantLayout({
  children,
  params,
}: {
  children: ReactNode;
  params: Promise<{ tenant: string }>;
}) {
  const { tenant } = await params;
  const user = await requireUser(`/t/${tenant}`);
  const tenants = await visibleTenants(user);
  if (!tenants.some((t) => t.slug === tenant)) notFound();
  const items = NAV.filter((n) => mayUse(user.role, n.section)).map((n) => ({
    label: n.label,
    href: `/t/${tenant}${n.path}`,
  }));
  return (
    <Providers csrfToken={user.csrfToken}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <div className="shell">
        <header className="topbar">
          <Link href={`/t/${tenant}`} className="brand">
            Tally
          </Link>
          <TenantSwitcher current={tenant} tenants={tenants.map((t) => ({ slug: t.slug, name: t.name }))} />
          <div className="who">
            <span data-testid="signed-in-user">{user.name ?? user.email}</span>{" "}
            <span className="role">{user.role}</span>
            <SignOutButton />
          </div>
        </header>
        <Nav items={items} />
        <main id="main" className="content">
          {children}
        </main>
      </div>
    </Providers>
  );
}
