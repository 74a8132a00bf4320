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
    expect(read({ NODE_ENV: "development", TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: " http://127.0.0.1:4011/ , https://sim.test/certs/" }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).toEqual(["http://127.0.0.1:4011/", "https://sim.test/certs/"]);
  });

  it("refuses prefixes that are not plain http(s) URL prefixes", () => {
    for (const bad of ["file:///tmp/", "http://user:pw@127.0.0.1:4011/", "http://127.0.0.1:4011/?x=1", "not a url"]) {
      expect(() => read({ TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: bad })).toThrow(/TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES/);
    }
  });

  it("is refused in production, unless TALLY_ALLOW_INSECURE_SIMULATORS=1 says so as well", () => {
    expect(() => read({ NODE_ENV: "production", TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: "http://127.0.0.1:4011/" })).toThrow(/refused with NODE_ENV=production unless TALLY_ALLOW_INSECURE_SIMULATORS=1/);
    expect(read({ NODE_ENV: "production", TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES: "http://127.0.0.1:4011/", TALLY_ALLOW_INSECURE_SIMULATORS: "1" }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).toEqual(["http://127.0.0.1:4011/"]);
    expect(read({ NODE_ENV: "production" }).TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES).toEqual([]);
  });
});
