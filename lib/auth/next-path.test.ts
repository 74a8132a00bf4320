import { describe, expect, it } from "vitest";
import { safeNextPath } from "@/lib/auth/next-path";

describe("the path followed after sign-in", () => {
  it("keeps a same-origin path with its query and fragment", () => {
    expect(safeNextPath("/t/demo/events?provider=stripe#top")).toBe("/t/demo/events?provider=stripe#top");
    expect(safeNextPath("/")).toBe("/");
  });

  // What ?next= holds once the query string is decoded: each is read by a browser as another host.
  const hostile = [
    "/\\evil.test/phish", // from /login?next=/%5Cevil.test/phish
    "/\t/evil.test", // from /%09/evil.test: tabs and newlines are stripped, leaving //evil.test
    "/\n/evil.test",
    "/\r\n/evil.test",
    "//evil.test",
    "///evil.test",
    "/\\/evil.test",
    "\\\\evil.test",
    "https://evil.test/",
    "javascript:alert(1)",
    " /evil",
    "evil.test",
    "",
  ];
  for (const next of hostile) {
    it(`refuses ${JSON.stringify(next)}`, () => {
      expect(safeNextPath(next)).toBe("/");
    });
  }

  it("refuses what is not a string", () => {
    expect(safeNextPath(undefined)).toBe("/");
    expect(safeNextPath(["/a", "//evil.test"])).toBe("/");
  });

  it("returns the parser's own serialisation, never raw control characters", () => {
    expect(safeNextPath("/a\tb/../c")).toBe("/c");
    expect(safeNextPath("/t/demo/\u0000x")).toBe("/t/demo/%00x");
  });
});
