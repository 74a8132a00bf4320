// How every detail page under /t/[tenant] opens (a case, an event, a run, an
// account): the reader may see the section or is told so, the id in the path is a
// bigint or the page is a 404, and so is an id this tenant does not own. The four
// pages each wrote these steps out; the order and the 404s are theirs.
import { notFound } from "next/navigation";
import type { ReactElement } from "react";
import { NoAccess } from "@/components/states";
import { requirePage, type PageAccess } from "@/lib/auth/page-access";
import type { Section } from "@/lib/auth/roles";
import { bigintId } from "@/lib/platform/query-params";

export type DetailParams = Promise<{ tenant: string; id: string }>;

export type OpenedDetail<T> = PageAccess & { slug: string; id: string; detail: T };

/** The page's data, or the page to show instead (no access); 404 for an id that is not a bigint or not found. */
export async function openDetail<T>(
  params: DetailParams,
  section: Section,
  sectionName: string,
  load: (tenantId: string, id: bigint) => Promise<T | null>,
): Promise<{ ok: true; opened: OpenedDetail<T> } | { ok: false; page: ReactElement }> {
  const { tenant: slug, id } = await params;
  const access = await requirePage(slug, section, `/${id}`);
  if (!access.allowed) return { ok: false, page: <NoAccess role={access.principal.role} section={sectionName} /> };
  const parsed = bigintId.safeParse(id);
  const detail = parsed.success ? await load(access.tenant.id, parsed.data) : null;
  if (!detail) notFound();
  return { ok: true, opened: { ...access, slug, id, detail } };
}
