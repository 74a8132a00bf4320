// What proposing and deciding on a case both ask of the caller: an accountant
// who is a person (four-eyes is about people, so no API tokens), and a case id.
import { ACTION_ROLES } from "@/lib/auth/roles";
import type { UserPrincipal } from "@/lib/auth/access";
import type { Person } from "@/lib/cases/cases";
import { bigintId } from "@/lib/platform/query-params";

export const CASE_ACTION = {
  roles: ACTION_ROLES.decideCases,
  usersOnly: "Cases are decided by people: sign in as an accountant; API tokens cannot propose or approve",
  params: { id: bigintId },
} as const;

export const personOf = (p: UserPrincipal): Person => ({ userId: p.userId, label: p.email });
