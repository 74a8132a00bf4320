import { describe, expect, it } from "vitest";
import { aTenant, unique } from "@/dev/testing/builders";
import { listAudit, SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createUser } from "@/lib/admin/users";

describe("auditing a new user", () => {
  it("a tenant's audit log names only that tenant, never the user's other tenants", async () => {
    const [ours, theirs, third] = [await aTenant(), await aTenant(), await aTenant()];
    const r = await createUser(
      { email: `${unique("u")}@example.test`, role: "accountant", tenants: [ours.slug, theirs.slug, third.slug] },
      SYSTEM_ACTOR,
    );
    expect(r.ok).toBe(true);
    for (const [reader, others] of [
      [ours, [theirs, third]],
      [theirs, [ours, third]],
      [third, [ours, theirs]],
    ] as const) {
      const { entries } = await listAudit({ tenantId: reader.id, action: "user.create" });
      expect(entries).toHaveLength(1);
      expect(entries[0]!.details).toMatchObject({ tenants: [reader.slug] });
      const visible = JSON.stringify(entries, (_k, v) => (typeof v === "bigint" ? String(v) : v));
      for (const other of others) {
        expect(visible).not.toContain(other.slug);
        expect(visible).not.toContain(other.id);
      }
    }
  });
});
