// `npm run tally -- alert-channel …` as an operator runs it: a real process
// against a real HTTP receiver.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aTenant } from "@/dev/testing/builders";
import { type Receiver, startReceiver } from "@/dev/testing/receiver";
import { prisma } from "@/lib/platform/db";

// Asynchronous: the receiver answering the CLI's test send lives in this process.
function tally(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], { env: process.env });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => {
      out += c;
    });
    child.stderr.on("data", (c) => {
      err += c;
    });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const bodies: Record<string, unknown>[] = [];
let receiver: Receiver;
let url: string;
beforeAll(async () => {
  receiver = await startReceiver(({ body }) => {
    bodies.push(JSON.parse(body));
  });
  url = `${receiver.base}/services/T1/B1/secret-part`;
});
afterAll(() => receiver.close());

describe("npm run tally -- alert-channel", () => {
  it("adds a Slack channel, lists it without its secret, sends a test, disables it; all audited", async () => {
    const t = await aTenant();
    const add = await tally(
      "alert-channel",
      "add",
      "--tenant",
      t.slug,
      "--kind",
      "slack",
      "--name",
      "ops",
      "--target",
      url,
    );
    expect(add.err).toBe("");
    expect(add.code).toBe(0);

    const list = await tally("alert-channel", "list", "--tenant", t.slug);
    expect(list.out).toContain("ops");
    expect(list.out).not.toContain("secret-part");

    const test = await tally("alert-channel", "test", "--tenant", t.slug, "--channel", "ops");
    expect(test.code).toBe(0);
    expect(test.out).toContain('Test notification delivered to "ops"');
    expect(bodies).toHaveLength(1);
    expect(String(bodies[0]!.text)).toContain(`[${t.slug}] Test: test notification to "ops"`);

    expect(
      (await tally("alert-channel", "disable", "--tenant", t.slug, "--channel", "ops", "--reason", "quiet")).code,
    ).toBe(0);
    const actions = await prisma.auditLog.findMany({
      where: { tenantId: t.id, action: { startsWith: "alert_channel." } },
      orderBy: { id: "asc" },
    });
    expect(actions.map((a) => [a.action, a.actorType])).toEqual([
      ["alert_channel.add", "CLI"],
      ["alert_channel.test", "CLI"],
      ["alert_channel.disable", "CLI"],
    ]);
  });

  it("refuses an unknown kind (usage, exit 2) and a bad address (exit 1), naming the problem", async () => {
    const t = await aTenant();
    const kind = await tally(
      "alert-channel",
      "add",
      "--tenant",
      t.slug,
      "--kind",
      "pager",
      "--name",
      "x",
      "--target",
      "y",
    );
    expect(kind.code).toBe(2);
    expect(kind.err).toContain("--kind must be one of email, webhook, slack");
    const email = await tally(
      "alert-channel",
      "add",
      "--tenant",
      t.slug,
      "--kind",
      "email",
      "--name",
      "x",
      "--target",
      "nope",
    );
    expect(email.code).toBe(1);
    expect(email.err).toContain('Error: "nope" is not an email address');
  });
});
