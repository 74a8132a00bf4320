// Reading raw events for people: listings for the CLI and dashboard.
import { prisma } from "@/lib/db";
import type { RawEventStatus } from "@/lib/generated/prisma/enums";

export const RAW_EVENT_STATUSES: readonly RawEventStatus[] = ["RECEIVED", "CLAIMED", "DONE", "DUPLICATE", "IGNORED", "FAILED"];

export type EventFilter = { tenantId: string; status?: RawEventStatus; provider?: string; reference?: string; from?: Date; to?: Date; limit?: number; beforeId?: bigint };

export async function listEvents(filter: EventFilter) {
  return prisma.rawEvent.findMany({
    where: {
      tenantId: filter.tenantId,
      ...(filter.status && { status: filter.status }),
      ...(filter.provider && { provider: filter.provider as never }),
      ...(filter.reference && { claims: { some: { providerReference: filter.reference } } }),
      ...((filter.from || filter.to) && { receivedAt: { ...(filter.from && { gte: filter.from }), ...(filter.to && { lt: filter.to }) } }),
      ...(filter.beforeId && { id: { lt: filter.beforeId } }),
    },
    orderBy: { id: "desc" },
    take: Math.min(filter.limit ?? 50, 500),
    select: { id: true, provider: true, source: true, status: true, receivedAt: true, processedAt: true, deliveryId: true, attempts: true, lastError: true, duplicateOfId: true, claims: { select: { providerReference: true, status: true } } },
  });
}
