import { afterEach, describe, expect, it, vi } from "vitest";
import { config, resetConfigForTests } from "@/lib/platform/config";

/** The configuration with exactly these variables changed from the test run's. */
const read = (env: Record<string, string>) => {
  vi.unstubAllEnvs();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  resetConfigForTests();
  return config();
};

afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

describe("the PayPal certificate escape hatch for simulators", () => {
  it("is off unless configured", () => {
    expect(read({}).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).toEqual([]);
  });

  it("reads a comma-separated list of http(s) prefixes outside production", () => {
    expect(
      read({
        NODE_ENV: "development",
        TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: " http://127.0.0.1:4011/ , https://sim.test/certs/",
      }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES,
    ).toEqual(["http://127.0.0.1:4011/", "https://sim.test/certs/"]);
  });

  it("refuses prefixes that are not plain http(s) URL prefixes", () => {
    for (const bad of ["file:///tmp/", "http://user:pw@127.0.0.1:4011/", "http://127.0.0.1:4011/?x=1", "not a url"]) {
      expect(() => read({ TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: bad })).toThrow(/TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES/);
    }
  });

  it("is refused in production, unless TALLY_ALLOW_INSECURE_SIMULATORS=1 says so as well", () => {
    expect(() =>
      read({ NODE_ENV: "production", TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: "http://127.0.0.1:4011/" }),
    ).toThrow(/refused with NODE_ENV=production unless TALLY_ALLOW_INSECURE_SIMULATORS=1/);
    expect(
      read({
        NODE_ENV: "production",
        TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: "http://127.0.0.1:4011/",
        TALLY_ALLOW_INSECURE_SIMULATORS: "1",
      }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES,
    ).toEqual(["http://127.0.0.1:4011/"]);
    expect(read({ NODE_ENV: "production" }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).toEqual([]);
  });
});

describe("fault hooks in production", () => {
  it("refuse to load, naming each flag, whatever its value", () => {
    expect(() => read({ NODE_ENV: "production", TALLY_FAULT_DISABLE_CLAIM: "1" })).toThrow(
      /TALLY_FAULT_DISABLE_CLAIM: fault hooks .* refused with NODE_ENV=production/,
    );
    expect(() => read({ NODE_ENV: "production", TALLY_FAULT_WORKER_DELAY_MS: "2000" })).toThrow(
      /TALLY_FAULT_WORKER_DELAY_MS/,
    );
    expect(() => read({ NODE_ENV: "production", TALLY_FAULT_PAUSE_AT: "after-claim" })).toThrow(/TALLY_FAULT_PAUSE_AT/);
    // "Off" is refused too: a production environment should carry no fault hook at all.
    expect(() => read({ NODE_ENV: "production", TALLY_FAULT_DISABLE_CLAIM: "0" })).toThrow(/TALLY_FAULT_DISABLE_CLAIM/);
  });

  it("names every flag set at once, including one the schema does not know", () => {
    let message = "";
    try {
      read({ NODE_ENV: "production", TALLY_FAULT_DISABLE_CLAIM: "true", TALLY_FAULT_SKIP_FENCE: "1" });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("TALLY_FAULT_DISABLE_CLAIM");
    expect(message).toContain("TALLY_FAULT_SKIP_FENCE");
  });

  it("load outside production, where tests and benchmarks use them", () => {
    expect(read({ NODE_ENV: "test", TALLY_FAULT_DISABLE_CLAIM: "1" }).TALLY_FAULT_DISABLE_CLAIM).toBe(true);
    expect(read({ NODE_ENV: "development", TALLY_FAULT_WORKER_DELAY_MS: "2000" }).TALLY_FAULT_WORKER_DELAY_MS).toBe(
      2000,
    );
  });

  it("an empty value is not a flag", () => {
    expect(read({ NODE_ENV: "production", TALLY_FAULT_PAUSE_AT: "" }).TALLY_FAULT_PAUSE_AT).toBe("");
  });
});
