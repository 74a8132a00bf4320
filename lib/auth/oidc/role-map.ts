// Which Tally role and tenants a person signing in through the identity provider gets:
// ONLY what their ID token's group claim says, through the mapping ops wrote in
// TALLY_OIDC_ROLE_MAP. Nothing about a person's access is decided anywhere else.
import type { Role } from "@/lib/generated/prisma/enums";

const ROLES: readonly Role[] = ["ops", "accountant", "admin"];

/** One line of the mapping: members of `group` get `role`, over `tenant` ("*": every tenant, admins only). */
export type RoleGrant = { group: string; tenant: string; role: Role };

/**
 * `group=tenant:role`, entries separated by commas or new lines, e.g.
 * `tally-admins=*:admin, acme-ops=acme:ops, acme-finance=acme:accountant`. The group is
 * everything before the entry's last "=" (so "CN=x" style names work); a group whose
 * name holds a comma needs the JSON form, `{"<group>": "tenant:role"}` or
 * `{"<group>": ["tenant:role", ...]}`. Returns the grants, or a message naming the bad entry.
 */
export function parseRoleMap(text: string): RoleGrant[] | string {
  const trimmed = text.trim();
  const pairs: [string, string][] = [];
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return "starts with { but is not JSON";
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return "JSON form must be an object";
    for (const [group, value] of Object.entries(parsed)) {
      const targets = Array.isArray(value) ? value : [value];
      for (const t of targets) {
        if (typeof t !== "string") return `"${group}": write "tenant:role" or a list of them`;
        pairs.push([group, t]);
      }
    }
  } else {
    for (const entry of trimmed
      .split(/[,\n]/)
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = entry.lastIndexOf("=");
      if (eq <= 0) return `"${entry}" is not group=tenant:role`;
      pairs.push([entry.slice(0, eq).trim(), entry.slice(eq + 1).trim()]);
    }
  }
  if (pairs.length === 0) return "maps no group: write group=tenant:role, ...";
  const grants: RoleGrant[] = [];
  for (const [group, target] of pairs) {
    const m = /^([^:\s]+):([a-z]+)$/.exec(target);
    if (!group || !m) return `"${group}=${target}" is not group=tenant:role`;
    const [, tenant, role] = m as unknown as [string, string, string];
    if (!ROLES.includes(role as Role)) return `"${group}=${target}": role must be one of ${ROLES.join(", ")}`;
    if (role === "admin" && tenant !== "*")
      return `"${group}=${target}": an admin sees every tenant, write ${group}=*:admin`;
    if (role !== "admin" && tenant === "*")
      return `"${group}=${target}": only admins cover every tenant; name the tenant's slug`;
    grants.push({ group, tenant, role: role as Role });
  }
  return grants;
}

/** What the claims grant: one role, and the tenants it covers (an admin's: all). */
export type Grant = { role: Role; tenants: string[]; groups: string[] };

export type GrantRefusal =
  | { ok: false; reason: "no_mapped_role"; message: string }
  | { ok: false; reason: "conflicting_roles"; message: string };

/**
 * A person has one role in Tally. Groups mapping to two different roles are refused
 * rather than one chosen: ops and accountant are not ranked (each may do what the
 * other may not), and guessing would hand out powers nobody wrote down.
 */
export function grantFor(
  grants: readonly RoleGrant[],
  groups: readonly string[],
): { ok: true; grant: Grant } | GrantRefusal {
  const matched = grants.filter((g) => groups.includes(g.group));
  if (matched.length === 0)
    return {
      ok: false,
      reason: "no_mapped_role",
      message:
        groups.length === 0
          ? "Your identity provider sent no groups, so Tally has no role for you. Ask an admin to add you to a Tally group."
          : `None of your groups (${groups.join(", ")}) is mapped to a Tally role. Ask an admin to add you to a Tally group.`,
    };
  const roles = [...new Set(matched.map((g) => g.role))].sort();
  if (roles.length > 1)
    return {
      ok: false,
      reason: "conflicting_roles",
      message: `Your groups map to more than one Tally role (${roles.join(", ")}: ${matched.map((g) => g.group).join(", ")}); a person has one role. Ask an admin to keep you in one.`,
    };
  const tenants = [...new Set(matched.filter((g) => g.tenant !== "*").map((g) => g.tenant))].sort();
  return {
    ok: true,
    grant: { role: roles[0] as Role, tenants, groups: [...new Set(matched.map((g) => g.group))].sort() },
  };
}
