// The tenant most integration test files share across their tests: made once, before
// the file's first test, in the file's own database. Six files declared it with a
// `let` and a beforeAll each; this returns the object the beforeAll fills, so tests
// read tenant.id and spread { ...tenant } exactly as before.
import { beforeAll } from "vitest";
import { aTenant, type TestTenant } from "@/dev/testing/builders";

export function fileTenant(): TestTenant {
  const tenant = {} as TestTenant;
  beforeAll(async () => {
    Object.assign(tenant, await aTenant());
  });
  return tenant;
}
