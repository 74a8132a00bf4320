// Before a PayPal capture or refund is posted, ask PayPal: GET {apiBaseUrl}/v2/payments/
// captures/{id} or /v2/payments/refunds/{id}, with an OAuth token made from the
// endpoint's client credentials. The webhook's signature covers only the CRC-32 of the
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
  "settings.clientId and settings.clientSecret (the PayPal REST app's client credentials) are required to confirm captures and refunds";
const settingsSchema = z.object({
  clientId: z.string({ error: NO_CREDENTIALS }).trim().min(1, NO_CREDENTIALS),
  clientSecret: z.string({ error: NO_CREDENTIALS }).trim().min(1, NO_CREDENTIALS),
  apiBaseUrl: z
    .string({ error: "settings.apiBaseUrl must be a URL" })
    .url("settings.apiBaseUrl must be a URL")
    .default(PAYPAL_API),
});

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

  return async function confirmPaypal(
    movement: Movement,
    rawSettings: Record<string, unknown>,
  ): Promise<ConfirmResult> {
    // PayPal's webhooks post captures and refunds only; anything else has nothing to confirm here.
    if (movement.kind !== "PAYMENT" && movement.kind !== "REFUND") return { ok: true };
    const settings = confirmSettings(settingsSchema, rawSettings);
    if (!settings.ok) return settings;
    const base = paypalApiBase(settings.value.apiBaseUrl);
    if (!base.ok) return { ok: false, reason: "not_configured", message: base.message };
    const { clientId, clientSecret } = settings.value;
    const what = movement.kind === "PAYMENT" ? "captures" : "refunds";
    const url = new URL(
      `${base.url.pathname.replace(/\/$/, "")}/v2/payments/${what}/${encodeURIComponent(movement.reference)}`,
      base.url,
    );

    let response: Response | null = null;
    // A token PayPal no longer honours (revoked, or expired early) is made again once.
    for (let attempt = 0; attempt < 2; attempt++) {
      const t = await token(base.url, clientId, clientSecret);
      if ("ok" in t) return t;
      response = await call(url, { headers: { authorization: `Bearer ${t.value}`, accept: "application/json" } });
      if (response.status !== 401) break;
      for (const [key, value] of tokens) if (value.value === t.value) tokens.delete(key);
    }
    if (!response) throw new Error("PayPal API: no response");
    if (response.status === 429 || response.status >= 500)
      throw new Error(`PayPal ${what} API answered HTTP ${response.status}; retry later`);
    if (response.status === 401 || response.status === 403)
      return {
        ok: false,
        reason: "not_configured",
        message: `PayPal refused the token made from settings.clientId (HTTP ${response.status}): the REST app may lack access to payments`,
      };
    const text = await response.text();
    if (response.status === 404)
      return {
        ok: false,
        reason: "not_found",
        message: `PayPal has no ${movement.kind === "PAYMENT" ? "capture" : "refund"} ${movement.reference} (HTTP 404)`,
      };
    if (!response.ok)
      return {
        ok: false,
        reason: "not_found",
        message: `PayPal answered HTTP ${response.status} for ${movement.kind === "PAYMENT" ? "capture" : "refund"} ${movement.reference}`,
      };
    let resource: z.infer<typeof paymentResource>;
    try {
      const r = paymentResource.safeParse(JSON.parse(text));
      if (!r.success) throw new Error(r.error.message);
      resource = r.data;
    } catch {
      throw new Error(`PayPal ${what} API answered HTTP ${response.status} with an unreadable body`);
    }

    const noun = movement.kind === "PAYMENT" ? "capture" : "refund";
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
