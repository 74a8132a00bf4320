// Before a PayPal movement is posted, ask PayPal: GET {apiBaseUrl}/v2/payments/
// captures/{id} or /v2/payments/refunds/{id} (a capture, a refund, a reversal, their
// fees) or /v1/customer/disputes/{id} (a dispute's movements), with an OAuth token made
// from the endpoint's client credentials. The webhook's signature covers only the CRC-32 of the
// body, and CRC-32 is not a cryptographic hash: from one captured delivery anyone can
// build a body with another amount and account and the same CRC-32 (a padding field
// solves it), so the signature verifies. PayPal's API answer is what is posted; a
// webhook that disagrees with it (amount, currency, account, the refunded capture) is
// FAILED, naming the field. Definite answers are values; outages are thrown (retry).
import { createHash } from "node:crypto";
import { z } from "zod";
import { type ApiBase, providerApiBase } from "@/lib/providers/api-base";
import { decimalText, toMinorUnits } from "@/lib/ledger/money";
import { confirmSettings } from "@/lib/providers/confirm-settings";
import { captureMovements, disputeMovements, refundMovements, reversalMovements } from "@/lib/providers/paypal/parse";
import type { ConfirmResult, Movement, ProviderApi } from "@/lib/providers/types";

export const PAYPAL_API = "https://api-m.paypal.com";
/** PayPal's REST API hosts (live and sandbox); any other base URL is a simulator's. */
export const PAYPAL_API_HOSTS: ProviderApi = {
  provider: "PayPal",
  hosts: ["api-m.paypal.com", "api-m.sandbox.paypal.com", "api.paypal.com", "api.sandbox.paypal.com"],
};
const DEFAULT_TIMEOUT_MS = 10_000;
/** A token is dropped this long before PayPal says it expires, so a request never carries one that dies in flight. */
const TOKEN_MARGIN_MS = 60_000;

const NO_CREDENTIALS =
  "settings.clientId and settings.clientSecret (the PayPal REST app's client credentials) are required to confirm PayPal's movements";
const settingsSchema = z.object({
  clientId: z.string({ error: NO_CREDENTIALS }).trim().min(1, NO_CREDENTIALS),
  clientSecret: z.string({ error: NO_CREDENTIALS }).trim().min(1, NO_CREDENTIALS),
  apiBaseUrl: z
    .string({ error: "settings.apiBaseUrl must be a URL" })
    .url("settings.apiBaseUrl must be a URL")
    .default(PAYPAL_API),
});

/** A movement's lookupId (./parse.ts): the path of the resource it was read from; ids as PayPal's are. */
const LOOKUP = /^(captures|refunds|disputes)\/([A-Za-z0-9-]{1,64})$/;

const tokenResponse = z.object({ access_token: z.string().min(1), expires_in: z.number().positive() });

const money = z.object({ value: z.union([z.string(), z.number()]), currency_code: z.string() });
/** What Tally reads of a capture or a refund (Payments v2); PayPal sends much more. */
const paymentResource = z.object({
  id: z.string(),
  status: z.string(),
  amount: money,
  custom_id: z.string().nullish(),
  invoice_id: z.string().nullish(),
  links: z.array(z.object({ href: z.string(), rel: z.string() })).nullish(),
});

/**
 * A capture keeps its money when it is later refunded: its status moves on to
 * PARTIALLY_REFUNDED or REFUNDED, and a late capture webhook must still post (the
 * refund posts on its own). A refund is money only when COMPLETED.
 */
const SETTLED_STATUSES = {
  PAYMENT: new Set(["COMPLETED", "PARTIALLY_REFUNDED", "REFUNDED"]),
  REFUND: new Set(["COMPLETED"]),
} as const;

/** https to PayPal's API hosts; others only where simulators are allowed (lib/providers/api-base.ts). */
export function paypalApiBase(text: string): ApiBase {
  return providerApiBase(text, PAYPAL_API_HOSTS);
}

function upLinkId(links: { href: string; rel: string }[] | null | undefined): string | undefined {
  const href = links?.find((l) => l.rel === "up")?.href;
  if (!href) return undefined;
  try {
    return new URL(href).pathname.split("/").filter(Boolean).at(-1);
  } catch {
    return undefined;
  }
}

type Token = { value: string; expiresAt: number };

export function paypalConfirmer(options: { timeoutMs?: number; clock?: () => number } = {}) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = options.clock ?? Date.now;
  // One token per API base and client, reused until it nears expiry (PayPal's last
  // 9 hours): asking for a token per movement would double the calls and meet PayPal's rate limit.
  const tokens = new Map<string, Token>();

  const call = async (url: URL, init: RequestInit): Promise<Response> => {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: "error" });
    } catch (error) {
      throw new Error(`PayPal API unreachable (${url.origin}): ${(error as Error).message}`, { cause: error });
    }
  };

  /** A token, or a definite refusal of the credentials; throws on outages. */
  async function token(base: URL, clientId: string, clientSecret: string): Promise<Token | ConfirmResult> {
    const key = `${base.href}\u0000${clientId}\u0000${createHash("sha256").update(clientSecret).digest("hex")}`;
    const cached = tokens.get(key);
    if (cached && cached.expiresAt > clock()) return cached;
    tokens.delete(key);
    const url = new URL(`${base.pathname.replace(/\/$/, "")}/v1/oauth2/token`, base);
    const response = await call(url, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: "grant_type=client_credentials",
    });
    if (response.status === 429 || response.status >= 500)
      throw new Error(`PayPal token API answered HTTP ${response.status}; retry later`);
    const text = await response.text();
    if (response.status === 400 || response.status === 401 || response.status === 403) {
      return {
        ok: false,
        reason: "not_configured",
        message: `PayPal refused the client credentials (HTTP ${response.status}${/invalid_client/.test(text) ? ": invalid_client" : ""}); check settings.clientId and settings.clientSecret`,
      };
    }
    let parsed: z.infer<typeof tokenResponse>;
    try {
      parsed = tokenResponse.parse(JSON.parse(text));
    } catch {
      throw new Error(`PayPal token API answered HTTP ${response.status} without a token`);
    }
    const made: Token = { value: parsed.access_token, expiresAt: clock() + parsed.expires_in * 1000 - TOKEN_MARGIN_MS };
    tokens.set(key, made);
    return made;
  }

  /**
   * GET a resource of PayPal's API (path under the base, e.g. /v2/payments/captures/{id}):
   * its JSON, or a definite refusal; throws on outages (network, 429, 5xx, unreadable body).
   */
  async function fetchResource(
    rawSettings: Record<string, unknown>,
    path: string,
    noun: string,
  ): Promise<{ ok: true; json: unknown } | (ConfirmResult & { ok: false })> {
    const settings = confirmSettings(settingsSchema, rawSettings);
    if (!settings.ok) return settings;
    const base = paypalApiBase(settings.value.apiBaseUrl);
    if (!base.ok) return { ok: false, reason: "not_configured", message: base.message };
    const { clientId, clientSecret } = settings.value;
    const url = new URL(`${base.url.pathname.replace(/\/$/, "")}${path}`, base.url);

    let response: Response | null = null;
    // A token PayPal no longer honours (revoked, or expired early) is made again once.
    for (let attempt = 0; attempt < 2; attempt++) {
      const t = await token(base.url, clientId, clientSecret);
      if ("ok" in t) return t as ConfirmResult & { ok: false };
      response = await call(url, { headers: { authorization: `Bearer ${t.value}`, accept: "application/json" } });
      if (response.status !== 401) break;
      for (const [key, value] of tokens) if (value.value === t.value) tokens.delete(key);
    }
    if (!response) throw new Error("PayPal API: no response");
    if (response.status === 429 || response.status >= 500)
      throw new Error(`PayPal API, asked for ${noun}, answered HTTP ${response.status}; retry later`);
    if (response.status === 401 || response.status === 403)
      return {
        ok: false,
        reason: "not_configured",
        message: `PayPal refused the token made from settings.clientId (HTTP ${response.status}): the REST app may lack access to ${noun.split(" ")[0]}s`,
      };
    const text = await response.text();
    if (response.status === 404) return { ok: false, reason: "not_found", message: `PayPal has no ${noun} (HTTP 404)` };
    if (!response.ok)
      return { ok: false, reason: "not_found", message: `PayPal answered HTTP ${response.status} for ${noun}` };
    try {
      return { ok: true, json: JSON.parse(text) };
    } catch {
      throw new Error(`PayPal API answered HTTP ${response.status} for ${noun} with an unreadable body`);
    }
  }

  /**
   * A fee, a reversal or a dispute's movement: PayPal's copy of the resource it was read
   * from (the movement's lookupId), through the parser's own mapping (./parse.ts).
   */
  async function confirmFromResource(movement: Movement, rawSettings: Record<string, unknown>): Promise<ConfirmResult> {
    const found = LOOKUP.exec(movement.lookupId ?? "");
    if (!found)
      return {
        ok: false,
        reason: "mismatch",
        message: `${movement.kind} ${movement.reference} names no PayPal resource to confirm it by (lookupId ${JSON.stringify(movement.lookupId ?? null)})`,
      };
    const [, what, id] = found as unknown as [string, "captures" | "refunds" | "disputes", string];
    const noun = `${what === "captures" ? "capture" : what === "refunds" ? (movement.kind === "DISPUTE" ? "reversal" : "refund") : "dispute"} ${id}`;
    const path =
      what === "disputes"
        ? `/v1/customer/disputes/${encodeURIComponent(id)}`
        : `/v2/payments/${what}/${encodeURIComponent(id)}`;
    const got = await fetchResource(rawSettings, path, noun);
    if (!got.ok) return got;
    if (what !== "disputes") {
      const status = z.object({ status: z.string() }).safeParse(got.json);
      const settled = what === "captures" ? SETTLED_STATUSES.PAYMENT : SETTLED_STATUSES.REFUND;
      if (!status.success || !settled.has(status.data.status))
        return {
          ok: false,
          reason: "not_successful",
          message: `PayPal says ${noun} is ${status.success ? status.data.status : "without a status"}, not ${what === "captures" ? "captured" : "COMPLETED"}`,
        };
    }
    const map =
      what === "captures"
        ? captureMovements
        : what === "disputes"
          ? disputeMovements
          : movement.kind === "DISPUTE"
            ? reversalMovements
            : refundMovements;
    const mapped = map(got.json, movement.occurredAt);
    if (!mapped.ok)
      return {
        ok: false,
        reason: "not_successful",
        message: `PayPal's record of ${noun} cannot be read: ${mapped.error}`,
      };
    const theirs = mapped.movements.find((m) => m.reference === movement.reference);
    if (!theirs)
      return {
        ok: false,
        reason: "not_found",
        message: `PayPal's record of ${noun} has no ${movement.kind} ${movement.reference}`,
      };
    const differences = (["kind", "amount", "currency", "paymentReference"] as const)
      .filter((f) => theirs[f] !== movement[f])
      .map((f) => `${f} ${String(theirs[f] ?? "(none)")}, webhook ${String(movement[f] ?? "(none)")}`);
    if (differences.length > 0)
      return {
        ok: false,
        reason: "mismatch",
        message: `PayPal's record of ${noun} disagrees with the webhook on ${movement.reference}: ${differences.join("; ")}`,
      };
    return { ok: true, movement: theirs };
  }

  return async function confirmPaypal(
    movement: Movement,
    rawSettings: Record<string, unknown>,
  ): Promise<ConfirmResult> {
    if (movement.kind !== "PAYMENT" && movement.kind !== "REFUND") return confirmFromResource(movement, rawSettings);
    const what = movement.kind === "PAYMENT" ? "captures" : "refunds";
    const noun = movement.kind === "PAYMENT" ? "capture" : "refund";
    const got = await fetchResource(
      rawSettings,
      `/v2/payments/${what}/${encodeURIComponent(movement.reference)}`,
      `${noun} ${movement.reference}`,
    );
    if (!got.ok) return got;
    const r = paymentResource.safeParse(got.json);
    if (!r.success) throw new Error(`PayPal ${what} API answered with an unreadable ${noun}: ${r.error.message}`);
    const resource = r.data;

    if (!SETTLED_STATUSES[movement.kind].has(resource.status)) {
      return {
        ok: false,
        reason: "not_successful",
        message: `PayPal says ${noun} ${resource.id} is ${resource.status}, not ${movement.kind === "PAYMENT" ? "captured" : "COMPLETED"}`,
      };
    }
    const differences: string[] = [];
    if (resource.id !== movement.reference) differences.push(`id ${resource.id}, webhook ${movement.reference}`);
    const currency = resource.amount.currency_code.toUpperCase();
    if (currency !== movement.currency) differences.push(`currency ${currency}, webhook ${movement.currency}`);
    const amountText = decimalText(resource.amount.value);
    const amount = amountText.ok ? toMinorUnits(amountText.text, currency) : amountText;
    if (!amount.ok) differences.push(`amount unreadable: ${amount.error}`);
    else if (amount.value !== movement.amount)
      differences.push(`amount ${amount.value} minor units, webhook ${movement.amount}`);
    // The parser's rule (parse.ts), applied to PayPal's record instead of the webhook's copy.
    const account = resource.custom_id || resource.invoice_id || null;
    if (account !== movement.account)
      differences.push(`account ${account ?? "(none)"}, webhook ${movement.account ?? "(none)"}`);
    const paymentReference = movement.kind === "REFUND" ? upLinkId(resource.links) : undefined;
    if (movement.kind === "REFUND" && paymentReference !== movement.paymentReference)
      differences.push(
        `refunded capture ${paymentReference ?? "(none)"}, webhook ${movement.paymentReference ?? "(none)"}`,
      );
    if (!amount.ok || differences.length > 0)
      return {
        ok: false,
        reason: "mismatch",
        message: `PayPal's record of ${noun} ${movement.reference} disagrees with the webhook: ${differences.join("; ")}`,
      };
    return {
      ok: true,
      movement: { ...movement, account, amount: amount.value, currency, ...(paymentReference && { paymentReference }) },
    };
  };
}

export const confirmPaypal = paypalConfirmer();
