import { describe, expect, it } from "vitest";
import { grantFor, parseRoleMap } from "@/lib/auth/oidc/role-map";

describe("TALLY_OIDC_ROLE_MAP", () => {
  it("reads group=tenant:role entries separated by commas or new lines", () => {
    expect(parseRoleMap("tally-admins=*:admin, acme-ops=acme:ops\nacme-finance = acme:accountant")).toEqual([
      { group: "tally-admins", tenant: "*", role: "admin" },
      { group: "acme-ops", tenant: "acme", role: "ops" },
      { group: "acme-finance", tenant: "acme", role: "accountant" },
    ]);
  });

  it("takes everything before the last = as the group, and JSON for groups with commas", () => {
    expect(parseRoleMap("CN=Finance=acme:accountant")).toEqual([
      { group: "CN=Finance", tenant: "acme", role: "accountant" },
    ]);
    expect(parseRoleMap('{"CN=Ops,OU=Tally": ["acme:ops", "globex:ops"], "admins": "*:admin"}')).toEqual([
      { group: "CN=Ops,OU=Tally", tenant: "acme", role: "ops" },
      { group: "CN=Ops,OU=Tally", tenant: "globex", role: "ops" },
      { group: "admins", tenant: "*", role: "admin" },
    ]);
  });

  it("names the entry it cannot read", () => {
    expect(parseRoleMap("acme-ops")).toBe('"acme-ops" is not group=tenant:role');
    expect(parseRoleMap("acme-ops=acme")).toBe('"acme-ops=acme" is not group=tenant:role');
    expect(parseRoleMap("x=acme:owner")).toMatch(/role must be one of ops, accountant, admin/);
    expect(parseRoleMap("x=acme:admin")).toMatch(/an admin sees every tenant, write x=\*:admin/);
    expect(parseRoleMap("x=*:ops")).toMatch(/only admins cover every tenant/);
    expect(parseRoleMap("{nope")).toBe("starts with { but is not JSON");
    expect(parseRoleMap(" , ")).toMatch(/maps no group/);
  });
});

describe("what a person's groups grant", () => {
  const map = parseRoleMap("admins=*:admin, acme-ops=acme:ops, globex-ops=globex:ops, acme-fin=acme:accountant");
  if (typeof map === "string") throw new Error(map);

  it("one role over the union of the tenants its groups name", () => {
    expect(grantFor(map, ["acme-ops", "globex-ops", "unrelated"])).toEqual({
      ok: true,
      grant: { role: "ops", tenants: ["acme", "globex"], groups: ["acme-ops", "globex-ops"] },
    });
    expect(grantFor(map, ["admins"])).toEqual({ ok: true, grant: { role: "admin", tenants: [], groups: ["admins"] } });
  });

  it("refuses groups that map to nothing, and groups that map to two roles", () => {
    expect(grantFor(map, ["unrelated"])).toMatchObject({ ok: false, reason: "no_mapped_role" });
    expect(grantFor(map, [])).toMatchObject({ ok: false, reason: "no_mapped_role" });
    expect(grantFor(map, ["acme-ops", "acme-fin"])).toMatchObject({ ok: false, reason: "conflicting_roles" });
    expect(grantFor(map, ["admins", "acme-ops"])).toMatchObject({ ok: false, reason: "conflicting_roles" });
  });
});
