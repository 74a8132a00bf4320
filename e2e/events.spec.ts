import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { alertOf, demo, demoUser, shot, signInApi, signInPage, standardHeaders, unique } from "./support";

test("events are searchable and an event page shows the body exactly as received", async ({ page, request }) => {
  // A Standard Webhooks delivery: its webhook-id is stored as the delivery id at once, before any parsing.
  const eventId = unique("msg_e2e");
  const body = Buffer.from(
    `{"type":"payment.succeeded",  "timestamp":"${new Date().toISOString()}", "note":"café ✓",\n "data":{"id":"${unique("pay_")}","amount":990,"currency":"EUR","account":"acct_e2e"}}`,
  );
  const signed = standardHeaders(body, demo().secrets.standard, eventId);
  const res = await request.post(`/api/webhooks/${demo().tenant}/standard`, {
    data: body,
    headers: { "content-type": "application/json", ...signed },
  });
  expect(res.status(), await res.text()).toBe(200);

  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/events`);
  const search = page.getByRole("search", { name: "Filter events" });
  await search.getByLabel("Reference or delivery id").fill(eventId);
  await search.getByLabel("Provider").selectOption("standard");
  await search.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(new RegExp(`reference=${eventId}`));
  const rows = page.getByRole("table", { name: "Events, newest first" }).getByRole("row");
  await expect(rows).toHaveCount(2);
  await shot(page, "events-search");
  await rows.nth(1).getByRole("link").first().click();

  await expect(page.getByRole("heading", { level: 1 })).toContainText("Event #");
  await expect(page.getByTestId("raw-body")).toHaveText(body.toString("utf8"));
  await expect(page.getByText("UTF-8 text, exactly as received")).toBeVisible();
  // The signature is a credential: the page says it was there and which check passed, never its value.
  await expect(page.getByRole("cell", { name: "webhook-id" })).toBeVisible();
  await expect(page.getByRole("cell", { name: "webhook-signature" })).toHaveCount(0);
  await expect(page.getByTestId("signature")).toContainText("Signature present, verified by webhook-signature");
  expect(await page.content()).not.toContain(signed["webhook-signature"]!.slice(3));
  await expect(page.getByRole("heading", { name: "Timeline" })).toBeVisible();
  await expect(page.getByText(/Received via webhook/)).toBeVisible();
  await shot(page, "event-page");
});

test("a body that is not UTF-8 is stored byte for byte and shown as hex", async ({ page, request }) => {
  // Signed over the raw bytes, as a provider would: ingest must take it as it is, not refuse or re-encode it.
  const deliveryId = unique("msg_bin");
  const body = Buffer.concat([
    Buffer.from(`{"type":"x","data":"`),
    Buffer.from([0xff, 0xfe, 0x00, 0x81, 0xc3, 0x28]),
    Buffer.from(`"}`),
  ]);
  const res = await request.post(`/api/webhooks/${demo().tenant}/standard`, {
    data: body,
    headers: { "content-type": "application/json", ...standardHeaders(body, demo().secrets.standard, deliveryId) },
  });
  expect(res.status(), await res.text()).toBe(200);

  const ops = await signInApi(demoUser("ops"));
  const found = await ops.call(
    "GET",
    `/api/v1/tenants/${demo().tenant}/events?provider=standard&reference=${deliveryId}`,
  );
  const events = (found.json as { events: { id: string }[] }).events;
  expect(events).toHaveLength(1);
  const stored = await ops.call("GET", `/api/v1/tenants/${demo().tenant}/events/${events[0]!.id}`);
  const storedBody = (stored.json as { event: { body: { text: string | null; base64: string; bytes: number } } }).event
    .body;
  expect(Buffer.from(storedBody.base64, "base64").equals(body)).toBe(true);
  expect(storedBody).toMatchObject({ text: null, bytes: body.length });
  await ops.api.dispose();

  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/events/${events[0]!.id}`);
  await expect(page.getByText("not valid UTF-8: shown as hex")).toBeVisible();
  await expect(page.getByTestId("raw-body")).toContainText("22 ff");
  await expect(page.getByTestId("raw-body")).toContainText("fe 00 81 c3 28");
  await shot(page, "event-page-hex");
});

test("a delivery refused for its signature is listed for ops with why, and nothing of it became an event", async ({
  page,
  request,
}) => {
  const reference = unique("pay_refused");
  const body = Buffer.from(
    `{"type":"payment.succeeded","timestamp":"${new Date().toISOString()}","data":{"id":"${reference}","amount":990,"currency":"EUR","account":"acct_e2e"}}`,
  );
  const forged = standardHeaders(
    body,
    `whsec_${Buffer.from("not the endpoint's secret").toString("base64")}`,
    unique("msg_f"),
  );
  const res = await request.post(`/api/webhooks/${demo().tenant}/standard`, {
    data: body,
    headers: { "content-type": "application/json", ...forged },
  });
  expect(res.status(), await res.text()).toBe(401);

  await signInPage(page, demoUser("ops"));
  await page.goto(`/t/${demo().tenant}/events`);
  await page.getByRole("link", { name: "Refused deliveries" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Refused deliveries");
  const search = page.getByRole("search", { name: "Filter refused deliveries" });
  await search.getByLabel("Reference or text in the body").fill(reference);
  await search.getByRole("button", { name: "Search" }).click();
  const rows = page.getByRole("table", { name: "Refused deliveries, newest first" }).getByRole("row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText("no_signature_matched");
  await expect(rows.nth(1)).toContainText(reference);
  const axe = await new AxeBuilder({ page }).include("main").analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
  await shot(page, "refused-deliveries");

  const ops = await signInApi(demoUser("ops"));
  const events = await ops.call("GET", `/api/v1/tenants/${demo().tenant}/events?reference=${reference}`);
  expect((events.json as { events: unknown[] }).events).toHaveLength(0);
  await ops.api.dispose();
});

test("an unknown event id is a 404 page", async ({ page }) => {
  await signInPage(page, demoUser("ops"));
  const res = await page.goto(`/t/${demo().tenant}/events/999999999`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
});

test("bad filters get a 400 naming the field from the API and a message on the page", async ({ page }) => {
  await signInPage(page, demoUser("ops"));
  const res = await page.request.get(`/api/v1/tenants/${demo().tenant}/events?status=NOPE&limit=0`);
  expect(res.status()).toBe(400);
  const error = ((await res.json()) as { error: { message: string } }).error.message;
  expect(error).toContain("status");
  expect(error).toContain("limit");
  await page.goto(`/t/${demo().tenant}/events?from=yesterday`);
  await expect(alertOf(page)).toContainText("from");
});
