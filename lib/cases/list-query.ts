// The cases list's filters as a query string, one schema for the JSON API and
// the page that reads the same filters from its URL.
import { z } from "zod";
import { AGE_BUCKETS, type AgeBucket } from "@/lib/cases/aging";
import { CASE_KINDS } from "@/lib/cases/sla-days";
import { bigintId } from "@/lib/platform/query-params";
import { CASE_STATES, type AssigneeFilter, type CaseState } from "@/lib/cases/list";
import type { CaseKindCode } from "@/lib/cases/labels";

const blank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

export const CaseQuery = z.object({
  state: z.preprocess(blank, z.enum(CASE_STATES as [CaseState, ...CaseState[]]).default("open")),
  kind: z.preprocess(blank, z.enum(CASE_KINDS as [CaseKindCode, ...CaseKindCode[]]).optional()),
  /** mine, unassigned, or a person's id. */
  assignee: z.preprocess(
    blank,
    z.union([z.enum(["mine", "unassigned"]), z.uuid({ message: "must be mine, unassigned or a user id" })]).optional(),
  ),
  age: z.preprocess(
    blank,
    z
      .enum(AGE_BUCKETS.map((b) => b.bucket) as [AgeBucket, ...AgeBucket[]], {
        message: "must be 0-1, 2-7, 8-30 or 31+",
      })
      .optional(),
  ),
  overdue: z.preprocess(
    blank,
    z
      .enum(["1", "true", "0", "false"])
      .transform((v) => v === "1" || v === "true")
      .optional(),
  ),
  before: z.preprocess(blank, bigintId.optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(200).default(50)),
});

export type CaseQueryValue = z.infer<typeof CaseQuery>;

/** "mine" is the reader's own id; a reader who is not a person has none. */
export function assigneeOf(value: CaseQueryValue["assignee"], me: string | null): AssigneeFilter | undefined | null {
  if (value === undefined) return undefined;
  if (value === "unassigned") return "unassigned";
  if (value === "mine") return me === null ? null : { userId: me };
  return { userId: value };
}
