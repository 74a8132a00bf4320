// Query-string inputs shared by the JSON API and the pages that read the same
// filters from their URL: blank means absent, dates are days or instants, ids are bigints.
import { z } from "zod";
import { RAW_EVENT_STATUSES } from "@/lib/views/events";
import { Provider } from "@/lib/generated/prisma/enums";

const blank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

// Raw event ids are 19 digits (milliseconds << 20, see the raw_events_by_month
// migration); anything past bigint's range is refused here, not by the database.
const BIGINT_MAX = 2n ** 63n - 1n;
export const bigintId = z
  .string()
  .regex(/^[1-9]\d{0,18}$/, "must be a positive whole number")
  // Zod runs this even when the pattern failed: only digits reach BigInt().
  .refine((v) => !/^[1-9]\d{0,18}$/.test(v) || BigInt(v) <= BIGINT_MAX, "must be at most 9223372036854775807")
  .transform((v) => BigInt(v));

/**
 * A calendar day, YYYY-MM-DD (UTC). Checked as a calendar date, not just a
 * shape: 2026-13-45 and 2026-02-30 are refused here (a Date would be Invalid,
 * or silently roll over into March), never passed on to a query.
 */
export const calendarDay = z.iso.date({ message: "must be a calendar date, YYYY-MM-DD" });

const timestamp = z.iso.datetime({
  offset: true,
  local: true,
  message: "must be a date (YYYY-MM-DD) or an ISO timestamp",
});

/** A day (YYYY-MM-DD, UTC) or an ISO instant (UTC unless it names an offset); `end` makes a day mean its end, so "to 2026-12-01" includes that day. */
const instant = (end: boolean) =>
  z.union([calendarDay, timestamp], { message: "must be a date (YYYY-MM-DD) or an ISO timestamp" }).transform((v) => {
    if (v.length === 10) return new Date(Date.parse(`${v}T00:00:00Z`) + (end ? 86_400_000 : 0));
    // A timestamp without an offset is read as UTC, as days are, whatever the server's time zone.
    return new Date(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(v) ? v : `${v}Z`);
  });

const text = (max: number) => z.preprocess(blank, z.string().trim().max(max).optional());
const limit = z.preprocess(blank, z.coerce.number().int().min(1).max(200).default(50));

export const EventQuery = z.object({
  status: z.preprocess(blank, z.enum(RAW_EVENT_STATUSES as [string, ...string[]]).optional()),
  provider: z.preprocess(blank, z.enum(Object.values(Provider) as [string, ...string[]]).optional()),
  reference: text(200),
  from: z.preprocess(blank, instant(false).optional()),
  to: z.preprocess(blank, instant(true).optional()),
  limit,
  before: z.preprocess(blank, bigintId.optional()),
});

export const RefusedQuery = z.object({
  provider: z.preprocess(blank, z.enum(Object.values(Provider) as [string, ...string[]]).optional()),
  reference: text(200),
  from: z.preprocess(blank, instant(false).optional()),
  to: z.preprocess(blank, instant(true).optional()),
  limit,
  before: z.preprocess(blank, bigintId.optional()),
});

export const AuditQuery = z.object({
  action: text(100),
  actor: text(200),
  from: z.preprocess(blank, instant(false).optional()),
  to: z.preprocess(blank, instant(true).optional()),
  /** Admins only: include entries tied to no tenant (sign-ins, admin users). */
  scope: z.preprocess(blank, z.enum(["tenant", "all"]).default("tenant")),
  limit,
  before: z.preprocess(blank, bigintId.optional()),
});

export const AccountQuery = z.object({
  kind: z.preprocess(blank, z.enum(["CUSTOMER", "PROVIDER_CLEARING", "CORRECTIONS"]).optional()),
  code: text(200),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(500).default(100)),
  after: z.preprocess(blank, bigintId.optional()),
});

/** Dead receipts: by provider, reference prefix and when they died. */
export const DeadReceiptFilter = z.object({
  provider: z.preprocess(blank, z.enum(Object.values(Provider) as [string, ...string[]]).optional()),
  reference: text(200),
  from: z.preprocess(blank, instant(false).optional()),
  to: z.preprocess(blank, instant(true).optional()),
});
export const DeadReceiptQuery = DeadReceiptFilter.extend({ limit, before: z.preprocess(blank, bigintId.optional()) });

/** Bulk reprocessing: which failed or ignored events, by provider, reference prefix and when received. */
export const BulkReprocessFilter = z.object({
  status: z.enum(["FAILED", "IGNORED"]),
  provider: z.preprocess(blank, z.enum(Object.values(Provider) as [string, ...string[]]).optional()),
  reference: text(200),
  from: z.preprocess(blank, instant(false).optional()),
  to: z.preprocess(blank, instant(true).optional()),
});

/** The reason a person gives for a state change (it goes into the audit log); `why` completes "Say why …". */
export const auditReason = (why: string) => z.string().trim().min(3, `Say why ${why} (at least 3 characters)`).max(500);

export const EntryQuery = z.object({ limit, before: z.preprocess(blank, bigintId.optional()) });
