// Reading raw events for people: listings for the CLI and dashboard.
import { prisma } from "@/lib/platform/db";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";

export const RAW_EVENT_STATUSES: readonly RawEventStatus[] = [
  "RECEIVED",
  "CLAIMED",
  "DONE",
  "DUPLICATE",
  "CONFLICT",
  "IGNORED",
  "FAILED",
];

export type EventFilter = {
  tenantId: string;
  status?: RawEventStatus;
  provider?: string;
  reference?: string;
  from?: Date;
  to?: Date;
  limit?: number;
  beforeId?: bigint;
};

export async function listEvents(filter: EventFilter) {
  return prisma.rawEvent.findMany({
    where: {
      tenantId: filter.tenantId,
      ...(filter.status && { status: filter.status }),
      ...(filter.provider && { provider: filter.provider as never }),
      // People paste whichever id they have: the payment's reference or the delivery's id. Every delivery
      // that carried the reference (movement_references, set when parsed) matches, not only the claim's winner.
      ...(filter.reference && {
        OR: [
          { movementReferences: { has: filter.reference } },
          { claims: { some: { providerReference: filter.reference } } },
          { deliveryId: filter.reference },
        ],
      }),
      ...((filter.from || filter.to) && {
        receivedAt: { ...(filter.from && { gte: filter.from }), ...(filter.to && { lt: filter.to }) },
      }),
      ...(filter.beforeId && { id: { lt: filter.beforeId } }),
    },
    orderBy: { id: "desc" },
    take: Math.min(filter.limit ?? 50, 500),
    select: {
      id: true,
      provider: true,
      source: true,
      status: true,
      eventType: true,
      receivedAt: true,
      processedAt: true,
      deliveryId: true,
      attempts: true,
      lastError: true,
      duplicateOfId: true,
      claims: { select: { providerReference: true, status: true } },
    },
  });
}

export type EventPage = { events: Awaited<ReturnType<typeof listEvents>>; nextBefore: bigint | null };

/** One page of a tenant's events, newest first, and the cursor for the next page. */
export async function searchEvents(filter: EventFilter): Promise<EventPage> {
  const limit = Math.min(filter.limit ?? 50, 500);
  const rows = await listEvents({ ...filter, limit: limit + 1 });
  const events = rows.slice(0, limit);
  return { events, nextBefore: rows.length > limit ? events[events.length - 1]!.id : null };
}

/** The body as text when it is valid UTF-8, else null (show it as hex). */
export function bodyAsText(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * An event with everything that happened to it: the claims its delivery won
 * (processed_events.raw_event_id), their postings with ledger entries, and
 * each posting's outbox receipts. Null when the id is not the tenant's.
 */
export async function getEvent(tenantId: string, id: bigint) {
  const event = await prisma.rawEvent.findFirst({ where: { id, tenantId } });
  if (!event) return null;
  const claims = await prisma.processedEvent.findMany({
    where: { rawEventId: event.id, tenantId },
    orderBy: { id: "asc" },
    include: {
      posting: {
        include: {
          entries: {
            orderBy: { id: "asc" },
            include: { account: { select: { id: true, code: true, kind: true, name: true } } },
          },
          outbox: {
            orderBy: { id: "asc" },
            select: {
              id: true,
              kind: true,
              createdAt: true,
              attempts: true,
              lastError: true,
              sentAt: true,
              availableAt: true,
            },
          },
        },
      },
    },
  });
  const duplicates = await prisma.rawEvent.findMany({
    where: { duplicateOfId: event.id, tenantId },
    select: { id: true, receivedAt: true },
    orderBy: { id: "asc" },
    take: 50,
  });
  return { event, claims, duplicates };
}

export type EventDetail = NonNullable<Awaited<ReturnType<typeof getEvent>>>;
