// Demo data for the README's start command: a tenant with signing secrets and
// four users. Created once; the generated secrets and passwords are kept in a
// local file (mode 0600) so every start can print them again.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SYSTEM_ACTOR } from "@/lib/audit";
import { prisma } from "@/lib/db";
import { addSecret, createTenant, generateSecret } from "@/lib/tenants";
import { createUser } from "@/lib/users";

export type DemoCredentials = {
  tenant: string;
  secrets: { stripe: string; standard: string };
  users: { email: string; role: string; password: string }[];
};

const USERS = [
  { email: "admin@demo.tally", role: "admin", name: "Ada Admin" },
  { email: "ops@demo.tally", role: "ops", name: "Otto Ops" },
  { email: "accountant.a@demo.tally", role: "accountant", name: "Alice Accountant" },
  { email: "accountant.b@demo.tally", role: "accountant", name: "Bruno Accountant" },
] as const;

export async function seedDemo(credentialsFile: string): Promise<DemoCredentials> {
  const saved: DemoCredentials | null = existsSync(credentialsFile) ? JSON.parse(readFileSync(credentialsFile, "utf8")) : null;
  const creds: DemoCredentials = saved ?? { tenant: "demo", secrets: { stripe: generateSecret("stripe"), standard: generateSecret("standard") }, users: [] };

  if (!(await prisma.tenant.findUnique({ where: { slug: creds.tenant } }))) {
    const t = await createTenant({ slug: creds.tenant, name: "Demo Payments Ltd" }, SYSTEM_ACTOR);
    if (!t.ok) throw new Error(t.message);
    for (const provider of ["stripe", "standard"] as const) {
      const r = await addSecret(creds.tenant, provider, creds.secrets[provider], { label: "demo" }, SYSTEM_ACTOR);
      if (!r.ok) throw new Error(r.message);
    }
  }
  for (const u of USERS) {
    if (await prisma.user.findUnique({ where: { email: u.email } })) continue;
    const r = await createUser({ email: u.email, role: u.role, name: u.name, tenants: u.role === "admin" ? [] : [creds.tenant] }, SYSTEM_ACTOR);
    if (!r.ok) throw new Error(r.message);
    creds.users = creds.users.filter((x) => x.email !== u.email).concat({ email: u.email, role: u.role, password: r.value.password });
  }
  mkdirSync(path.dirname(credentialsFile), { recursive: true });
  writeFileSync(credentialsFile, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return creds;
}
