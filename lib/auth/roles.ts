// What each role may use: the one table the nav, the pages and the JSON API
// all read, so a section cannot be visible in one and refused in another.
import type { Role } from "@/lib/generated/prisma/enums";

export const ROLES: readonly Role[] = ["ops", "accountant", "admin"];

export type Section =
  | "overview"
  | "claims"
  | "events"
  | "reconciliation"
  | "bank"
  | "cases"
  | "ledger"
  | "audit"
  | "admin";

/**
 * ops watch ingestion and the worker; accountants own the books and the
 * discrepancy cases; admins manage tenants, secrets and people and may see
 * everything. Everyone may read events and the overview.
 */
export const SECTION_ROLES: Record<Section, readonly Role[]> = {
  overview: ["ops", "accountant", "admin"],
  claims: ["ops", "admin"],
  events: ["ops", "accountant", "admin"],
  reconciliation: ["ops", "accountant", "admin"],
  bank: ["ops", "accountant", "admin"],
  cases: ["accountant", "admin"],
  ledger: ["accountant", "admin"],
  audit: ["ops", "accountant", "admin"],
  admin: ["admin"],
};

export const NAV: readonly { section: Section; label: string; path: string }[] = [
  { section: "overview", label: "Overview", path: "" },
  { section: "claims", label: "Stuck claims", path: "/claims" },
  { section: "events", label: "Events", path: "/events" },
  { section: "reconciliation", label: "Reconciliation", path: "/reconciliation" },
  { section: "bank", label: "Bank", path: "/bank" },
  { section: "cases", label: "Cases", path: "/cases" },
  { section: "ledger", label: "Ledger", path: "/ledger" },
  { section: "audit", label: "Audit log", path: "/audit" },
  { section: "admin", label: "Admin", path: "/admin" },
];

export function mayUse(role: Role, section: Section): boolean {
  return SECTION_ROLES[section].includes(role);
}

/** State changes a section offers, and who may make them (reading needs the section too). */
export type Action = "reprocess" | "redeliver" | "reconcile" | "importBank" | "decideCases";

/**
 * ops send stuck events back through the worker and dead receipts out again; anyone who sees reconciliation
 * may start a run or import a report; only accountants propose and approve
 * case resolutions (four-eyes: never the same accountant for both).
 */
export const ACTION_ROLES: Record<Action, readonly Role[]> = {
  reprocess: ["ops"],
  redeliver: ["ops"],
  reconcile: ["ops", "accountant", "admin"],
  // A bank statement is the books' evidence of what arrived: accountants bring it in; ops and admins read it.
  importBank: ["accountant"],
  decideCases: ["accountant"],
};

export function mayDo(role: Role, action: Action): boolean {
  return ACTION_ROLES[action].includes(role);
}
