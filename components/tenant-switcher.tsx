"use client";
// Switches tenant by URL: the same page under /t/{other tenant}/, minus any
// record id, which belongs to the tenant being left.
import { usePathname, useRouter } from "next/navigation";

export function TenantSwitcher({ current, tenants }: { current: string; tenants: { slug: string; name: string }[] }) {
  const router = useRouter();
  const pathname = usePathname();
  if (tenants.length < 2) return <span className="tenant-name">{tenants[0]?.name ?? current}</span>;
  return (
    <label className="tenant-switcher">
      <span>Tenant</span>
      <select
        value={current}
        onChange={(e) => {
          const section = pathname.split("/")[3];
          router.push(`/t/${e.target.value}${section ? `/${section}` : ""}`);
        }}
      >
        {tenants.map((t) => (
          <option key={t.slug} value={t.slug}>
            {t.name} ({t.slug})
          </option>
        ))}
      </select>
    </label>
  );
}
