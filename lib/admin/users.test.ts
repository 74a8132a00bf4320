import { describe, expect, it } from "vitest";
import { aTenant, unique } from "@/dev/testing/builders";
import { listAudit, SYSTEM_ACTOR } from "@/lib/admin/audit";
import { createUser, updateUser } from "@/lib/admin/users";
import { prisma } from "@/lib/platform/db";

/** Two fresh active admins, and no other active admin (this file's database is its own). */
async function onlyTwoAdmins(): Promise<[string, string]> {
  await prisma.user.updateMany({ where: { role: "admin" }, data: { disabledAt: new Date() } });
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await createUser({ email: `${unique("admin")}@example.test`, role: "admin", tenants: [] }, SYSTEM_ACTOR);
    if (!r.ok) throw new Error(r.message);
    ids.push(r.value.id);
  }
  return [ids[0]!, ids[1]!];
}

const activeAdmins = () => prisma.user.count({ where: { role: "admin", disabledAt: null } });

describe("the last active admin", () => {
  it("can be neither demoted nor disabled, and nothing is written or audited", async () => {
    const [a, b] = await onlyTwoAdmins();
    expect((await updateUser(b, { disabled: true, reason: "left" }, SYSTEM_ACTOR)).ok).toBe(true);
    const before = await prisma.auditLog.count({ where: { subjectId: a } });
    const demote = await updateUser(a, { role: "ops", tenants: [(await aTenant()).slug] }, SYSTEM_ACTOR);
    expect(demote).toMatchObject({ ok: false, reason: "last_admin" });
    const disable = await updateUser(a, { disabled: true, reason: "test" }, SYSTEM_ACTOR);
    expect(disable).toMatchObject({ ok: false, reason: "last_admin" });
    expect(await prisma.user.findUniqueOrThrow({ where: { id: a } })).toMatchObject({
      role: "admin",
      disabledAt: null,
    });
    expect(await prisma.auditLog.count({ where: { subjectId: a } })).toBe(before);
    // A disabled admin is not the one keeping Tally administrable: demoting it is fine.
    expect((await updateUser(b, { role: "accountant", tenants: [(await aTenant()).slug] }, SYSTEM_ACTOR)).ok).toBe(
      true,
    );
  });

  it("two admins demoting or disabling each other at the same moment leave one of them admin", async () => {
    const tenant = await aTenant();
    for (let round = 0; round < 5; round++) {
      const [a, b] = await onlyTwoAdmins();
      const results = await Promise.all([
        updateUser(a, { role: "ops", tenants: [tenant.slug] }, SYSTEM_ACTOR),
        round % 2
          ? updateUser(b, { disabled: true }, SYSTEM_ACTOR)
          : updateUser(b, { role: "ops", tenants: [tenant.slug] }, SYSTEM_ACTOR),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok && r.reason === "last_admin")).toHaveLength(1);
      expect(await activeAdmins()).toBe(1);
    }
  });
});

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
