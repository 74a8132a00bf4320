// The operator CLI as an operator runs it: a real process, exit codes and output.
import { openSettings } from "@/lib/platform/secrets-at-rest";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { prisma } from "@/lib/platform/db";
import { hashToken } from "@/lib/auth/api-tokens";

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "workers/tally.ts", ...args], {
    encoding: "utf8",
    env: process.env,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("npm run tally", () => {
  it("sets up a tenant end to end: tenant, secret, user, token, events", async () => {
    const slug = `cli-${Date.now()}`;
    expect(tally("tenant", "add", "--slug", slug, "--name", "CLI Co")).toMatchObject({
      code: 0,
      out: expect.stringContaining(`Tenant ${slug} created`),
    });
    expect(
      tally("secret", "add", "--tenant", slug, "--provider", "stripe", "--secret", "whsec_cli_secret_0123456789"),
    ).toMatchObject({ code: 0, out: expect.stringContaining(`/api/webhooks/${slug}/stripe`) });
    const endpoint = tally(
      "endpoint",
      "set",
      "--tenant",
      slug,
      "--provider",
      "stripe",
      "--setting",
      "apiKey=sk_test_0123456789",
      "--setting",
      "apiBaseUrl=http://127.0.0.1:4010",
      "--tolerance-seconds",
      "600",
    );
    expect(endpoint).toMatchObject({ code: 0, out: expect.stringContaining("tolerance 600 s") });
    expect(endpoint.out).not.toContain("sk_test_0123456789");
    // Stored sealed (secrets at rest); opened, it is the key given.
    const stored = (await prisma.providerEndpoint.findFirstOrThrow({ where: { tenant: { slug } } })).settings as Record<
      string,
      unknown
    >;
    expect(stored).toEqual({ apiKey: expect.stringMatching(/^v1:[0-9a-f]{8}:/), apiBaseUrl: "http://127.0.0.1:4010" });
    expect(openSettings(stored)).toEqual({ apiKey: "sk_test_0123456789", apiBaseUrl: "http://127.0.0.1:4010" });
    const user = tally("user", "add", "--email", `Ops.${slug}@Example.com`, "--role", "ops", "--tenant", slug);
    expect(user.code).toBe(0);
    expect(user.out).toMatch(/Password \(shown once\): \S{19}/);
    expect(await prisma.user.findUnique({ where: { email: `ops.${slug}@example.com` } })).toMatchObject({
      role: "ops",
    });
    const token = tally("token", "add", "--tenant", slug, "--role", "accountant");
    const printed = token.out.match(/tly_[A-Za-z0-9_-]+/)?.[0];
    expect(printed).toBeDefined();
    expect(await prisma.apiToken.findUnique({ where: { tokenHash: hashToken(printed!) } })).toMatchObject({
      role: "accountant",
    });
    expect(await prisma.apiToken.count({ where: { tokenHash: printed! } })).toBe(0); // never stored in the clear
    expect(tally("events", "list", "--tenant", slug)).toMatchObject({
      code: 0,
      out: expect.stringContaining("0 shown of 0"),
    });
    expect(await prisma.auditLog.count({ where: { tenant: { slug }, actorType: "CLI" } })).toBeGreaterThanOrEqual(4);
  });

  it("rejects bad arguments with a clear message and exit code 2", () => {
    expect(tally("tenant", "add", "--slug", "x")).toMatchObject({
      code: 2,
      err: expect.stringContaining("Missing --name"),
    });
    expect(tally("tenant", "add", "--slug", "x", "--name", "y", "--colour", "red")).toMatchObject({
      code: 2,
      err: expect.stringContaining("Unknown option '--colour'"),
    });
    expect(tally("frobnicate")).toMatchObject({
      code: 2,
      err: expect.stringContaining('Unknown command "frobnicate"'),
    });
    expect(tally("events", "list", "--tenant", "nobody", "--status", "WEIRD")).toMatchObject({
      code: 2,
      err: expect.stringContaining("--status must be one of"),
    });
  });

  it("reports domain errors with exit code 1", () => {
    expect(tally("tenant", "add", "--slug", "Not A Slug", "--name", "y")).toMatchObject({
      code: 1,
      err: expect.stringContaining("must be lower-case letters"),
    });
    expect(
      tally("secret", "add", "--tenant", "nobody", "--provider", "stripe", "--secret", "sk_live_abcdefgh"),
    ).toMatchObject({ code: 1, err: expect.stringContaining("starts with whsec_") });
    expect(tally("user", "add", "--email", "a@b.co", "--role", "boss", "--tenant", "x")).toMatchObject({
      code: 1,
      err: expect.stringContaining("Role must be one of"),
    });
  });
});
