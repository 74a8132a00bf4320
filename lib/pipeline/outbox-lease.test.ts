// A leased batch of receipts never outlives its lease: against a real receiver that
// answers slowly, the dispatcher stops starting sends past half the lease and gives the
// rest back at once, unsent and with the attempt not counted, so no other dispatcher
// sends them again while this one is still busy; every receipt arrives once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { aStripePayment, stripeRequest } from "@/dev/testing/builders";
import { silent } from "@/dev/testing/drain";
import { fileTenant } from "@/dev/testing/file-tenant";
import { deliver } from "@/dev/testing/route";
import { resetConfigForTests } from "@/lib/platform/config";
import { prisma } from "@/lib/platform/db";
import { dispatchOutbox } from "@/lib/pipeline/outbox";
import { httpTransport } from "@/lib/pipeline/receipt-transport";
import { processOnce } from "@/lib/pipeline/worker";

const tenant = fileTenant();
const ANSWER_AFTER_MS = 150;
const received: string[] = [];
let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(String(req.headers["idempotency-key"]));
      setTimeout(() => res.end("ok"), ANSWER_AFTER_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/receipts`;
  process.env.TALLY_OUTBOX_LEASE_MS = "1000";
  resetConfigForTests();
});
afterAll(async () => {
  delete process.env.TALLY_OUTBOX_LEASE_MS;
  resetConfigForTests();
  await new Promise<void>((r) => server.close(() => r()));
});

it("a batch of slow receipts stops at half its lease and gives the rest back unsent, so each is sent once", async () => {
  for (let i = 0; i < 10; i++) {
    const res = await deliver(stripeRequest(tenant, aStripePayment({ reference: `pi_lease_${Date.now()}_${i}` })));
    expect(res.status).toBe(200);
  }
  while ((await processOnce(silent)) > 0);
  const transport = httpTransport(url);

  const first = await dispatchOutbox(transport, 10);
  expect(first.leased).toBe(10);
  // 150 ms each against a 1,000 ms lease: sends start until 500 ms have passed, 4 or 5 of them.
  expect(first.sent).toBeGreaterThanOrEqual(3);
  expect(first.sent).toBeLessThanOrEqual(5);
  const left = await prisma.outboxMessage.findMany({ where: { tenantId: tenant.id, sentAt: null } });
  expect(left).toHaveLength(10 - first.sent);
  // Given back at once, not at the lease's end, and not counted as an attempt.
  for (const row of left) {
    expect(row.attempts).toBe(0);
    expect(row.availableAt.getTime()).toBeLessThanOrEqual(Date.now());
  }

  let rounds = 1;
  while ((await prisma.outboxMessage.count({ where: { tenantId: tenant.id, sentAt: null } })) > 0) {
    await dispatchOutbox(transport, 10);
    rounds++;
  }
  expect(rounds).toBeGreaterThanOrEqual(3);
  expect(received).toHaveLength(10);
  expect(new Set(received).size).toBe(10);
});
