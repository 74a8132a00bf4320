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

describe("single sign-on settings", () => {
  const complete = {
    TALLY_OIDC_ISSUER: "https://idp.example.com/realms/tally",
    TALLY_OIDC_CLIENT_ID: "tally",
    TALLY_OIDC_CLIENT_SECRET: "s3cret",
    TALLY_OIDC_REDIRECT_BASE_URL: "https://tally.example.com",
    TALLY_OIDC_ROLE_MAP: "tally-admins=*:admin",
  };

  it("are off when unset or empty, and read when complete", () => {
    expect(read({}).TALLY_OIDC_ISSUER).toBeUndefined();
    expect(read({ TALLY_OIDC_ISSUER: "", TALLY_OIDC_ROLE_MAP: "" }).TALLY_OIDC_ROLE_MAP).toBeUndefined();
    expect(read(complete).TALLY_OIDC_ROLE_MAP).toEqual([{ group: "tally-admins", tenant: "*", role: "admin" }]);
  });

  it("name each missing variable when only some are set", () => {
    expect(() => read({ TALLY_OIDC_ISSUER: complete.TALLY_OIDC_ISSUER })).toThrow(
      /TALLY_OIDC_CLIENT_ID: is required for single sign-on.*TALLY_OIDC_ROLE_MAP: is required/,
    );
  });

  it("refuse a role map they cannot read, naming the entry", () => {
    expect(() => read({ ...complete, TALLY_OIDC_ROLE_MAP: "finance=acme:boss" })).toThrow(
      /TALLY_OIDC_ROLE_MAP: "finance=acme:boss": role must be one of/,
    );
  });

  it("refuse a plain-http issuer unless it is a loopback test provider, and in production unless told", () => {
    expect(() => read({ ...complete, TALLY_OIDC_ISSUER: "http://idp.example.com" })).toThrow(
      /TALLY_OIDC_ISSUER: must be https/,
    );
    expect(read({ ...complete, TALLY_OIDC_ISSUER: "http://127.0.0.1:4444" }).TALLY_OIDC_ISSUER).toBe(
      "http://127.0.0.1:4444",
    );
    expect(() => read({ ...complete, NODE_ENV: "production", TALLY_OIDC_ISSUER: "http://127.0.0.1:4444" })).toThrow(
      /TALLY_OIDC_ISSUER: is plain http, refused with NODE_ENV=production/,
    );
  });
});
