// Two real worker processes evaluating the alert rules every 100 ms against one
// database: the alert opens once and clears once, and the receiver hears of
// each once, however many passes both replicas make while it stays open or closed.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { addChannel } from "@/lib/alerts/channels";
import { aStripePayment, aTenant, stripeRequest } from "@/dev/testing/builders";
import { type Receiver, startReceiver } from "@/dev/testing/receiver";
import { silent } from "@/dev/testing/drain";
import { deliver } from "@/dev/testing/route";
import { startWorkerProcess, type WorkerProcess } from "@/dev/testing/worker-process";
import { prisma } from "@/lib/platform/db";
import { redeliverDeadReceipts } from "@/lib/pipeline/dead-letters";
import { processOnce } from "@/lib/pipeline/worker";

const received: { key: string; status: string }[] = [];
let receiver: Receiver;
let url: string;
const running: WorkerProcess[] = [];
beforeAll(async () => {
  receiver = await startReceiver(({ headers, body }) => {
    received.push({ key: String(headers["idempotency-key"]), status: JSON.parse(body).status });
  });
  url = `${receiver.base}/alerts`;
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((w) => w.kill("SIGKILL")));
  await receiver.close();
});

/** Waits until both replicas have judged the rules again well after `since`: at least ten passes each at 100 ms. */
async function passesAfter(tenantId: string, since: Date) {
  for (;;) {
    const s = await prisma.alertState.findFirstOrThrow({ where: { tenantId, rule: "dead_receipts" } });
    if (s.checkedAt.getTime() > since.getTime() + 1000) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("alert evaluation in two worker replicas", () => {
  it("opens once and clears once: one notification each way", async () => {
    const t = await aTenant();
    const ops = { ...SYSTEM_ACTOR, label: "test" };
    expect((await addChannel(t.id, { kind: "WEBHOOK", name: "hook", target: url }, ops)).ok).toBe(true);
    expect((await deliver(stripeRequest(t, aStripePayment({ reference: "pi_replicas_1" })))).status).toBe(200);
    while ((await processOnce(silent)) > 0);
    const receipt = await prisma.outboxMessage.findFirstOrThrow({ where: { tenantId: t.id } });
    await prisma.outboxMessage.update({ where: { id: receipt.id }, data: { deadAt: new Date(), attempts: 7 } });

    const receipts = path.join(mkdtempSync(path.join(os.tmpdir(), "tally-alert-replicas-")), "receipts.ndjson");
    for (let i = 0; i < 2; i++)
      running.push(startWorkerProcess({ TALLY_ALERT_INTERVAL_MS: "100", TALLY_RECEIPTS_FILE: receipts }));
    await Promise.all(running.map((w) => w.waitFor("worker.ready")));

    for (;;) {
      if (received.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await passesAfter(t.id, new Date());
    expect(received.map((r) => r.status)).toEqual(["opened"]);
    const opened = running.flatMap((w) => w.lines.filter((l) => l.event === "alert.opened" && l.tenant === t.slug));
    expect(opened).toHaveLength(1);

    expect((await redeliverDeadReceipts(t.id, { ids: [receipt.id], reason: "receiver fixed" }, ops)).ok).toBe(true);
    for (;;) {
      if (received.length > 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Cleared, the state is not checked any more; give both replicas ten passes by the clock of the database.
    const [later] = await prisma.$queryRaw<{ at: Date }[]>`SELECT now() + interval '1 second' AS at`;
    for (;;) {
      const [row] = await prisma.$queryRaw<{ past: boolean }[]>`SELECT now() > ${later!.at} AS past`;
      if (row!.past) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(received.map((r) => r.status)).toEqual(["opened", "resolved"]);
    expect(new Set(received.map((r) => r.key)).size).toBe(2);
    const resolved = running.flatMap((w) => w.lines.filter((l) => l.event === "alert.resolved" && l.tenant === t.slug));
    expect(resolved).toHaveLength(1);
  });
});
