// Before a Flutterwave payment is credited, ask Flutterwave whether it happened:
// GET {apiBaseUrl}/v3/transactions/{id}/verify with the secret key. The webhook's
// verif-hash is only a shared password, so this answer, not the webhook, is what
// Tally trusts: the transaction must exist, be successful, and agree on reference,
// amount, currency and the account credited. Definite answers are values; outages are thrown (retry).
import { z } from "zod";
import { providerApiBase } from "@/lib/providers/api-base";
import { decimalText, toMinorUnits } from "@/lib/ledger/money";
import { metadataAccount } from "@/lib/providers/fields";
import { confirmSettings } from "@/lib/providers/confirm-settings";
import type { ConfirmResult, Movement, ProviderApi } from "@/lib/providers/types";

export const FLUTTERWAVE_API = "https://api.flutterwave.com";
export const FLUTTERWAVE_API_HOSTS: ProviderApi = { provider: "Flutterwave", hosts: ["api.flutterwave.com"] };
const DEFAULT_TIMEOUT_MS = 10_000;

const NO_KEY = "settings.secretKey (the Flutterwave secret key, FLWSECK…) is required to confirm payments";
const settingsSchema = z.object({
  secretKey: z.string({ error: NO_KEY }).trim().min(1, NO_KEY),
  apiBaseUrl: z
    .string({ error: "settings.apiBaseUrl must be a URL" })
    .url("settings.apiBaseUrl must be a URL")
    .default(FLUTTERWAVE_API),
});

const verifyResponse = z.object({
  status: z.string(),
  message: z.string().optional(),
  data: z
    .object({
      id: z.union([z.number(), z.string()]).transform(String),
      flw_ref: z.string().nullish(),
      status: z.string().nullish(),
      amount: z.union([z.number(), z.string()]),
      currency: z.string(),
      meta: z.unknown().optional(),
      meta_data: z.unknown().optional(),
      customer: z.object({ id: z.union([z.number(), z.string()]).nullish() }).nullish(),
    })
    .nullish(),
});

export function flutterwaveConfirmer(options: { timeoutMs?: number } = {}) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  return async function confirmFlutterwave(
    movement: Movement,
    rawSettings: Record<string, unknown>,
  ): Promise<ConfirmResult> {
    const settings = confirmSettings(settingsSchema, rawSettings);
    if (!settings.ok) return settings;
    const api = providerApiBase(settings.value.apiBaseUrl, FLUTTERWAVE_API_HOSTS);
    if (!api.ok) return { ok: false, reason: "not_configured", message: api.message };
    const base = api.url;
    if (!movement.lookupId)
      return {
        ok: false,
        reason: "not_found",
        message: `movement ${movement.reference} carries no Flutterwave transaction id to verify`,
      };

    const url = new URL(
      `${base.pathname.replace(/\/$/, "")}/v3/transactions/${encodeURIComponent(movement.lookupId)}/verify`,
      base,
    );
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${settings.value.secretKey}`, accept: "application/json" },
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      });
    } catch (error) {
      throw new Error(`Flutterwave verify API unreachable (${url.origin}): ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (response.status === 429 || response.status >= 500)
      throw new Error(`Flutterwave verify API answered HTTP ${response.status}; retry later`);
    const text = await response.text();
    let body: z.infer<typeof verifyResponse> | null = null;
    try {
      const r = verifyResponse.safeParse(JSON.parse(text));
      if (r.success) body = r.data;
    } catch {
      // Not JSON: judged by status below.
    }
    if (response.status === 401 || response.status === 403) {
      return {
        ok: false,
        reason: "not_configured",
        message: `Flutterwave refused the secret key (HTTP ${response.status}${body?.message ? `: ${body.message}` : ""})`,
      };
    }
    if (!response.ok || !body || body.status !== "success" || !body.data) {
      if (response.ok && !body)
        throw new Error(`Flutterwave verify API answered HTTP ${response.status} with an unreadable body`);
      return {
        ok: false,
        reason: "not_found",
        message: `Flutterwave has no transaction ${movement.lookupId} (HTTP ${response.status}${body?.message ? `: ${body.message}` : ""})`,
      };
    }
    const tx = body.data;
    if (tx.status !== "successful")
      return {
        ok: false,
        reason: "not_successful",
        message: `Flutterwave says transaction ${tx.id} is ${tx.status ?? "of unknown status"}, not successful`,
      };

    const differences: string[] = [];
    if (tx.id !== movement.lookupId) differences.push(`id ${tx.id}, webhook ${movement.lookupId}`);
    if (tx.flw_ref !== movement.reference)
      differences.push(`flw_ref ${tx.flw_ref ?? "(none)"}, webhook ${movement.reference}`);
    const currency = tx.currency.toUpperCase();
    if (currency !== movement.currency) differences.push(`currency ${currency}, webhook ${movement.currency}`);
    const amountText = decimalText(tx.amount);
    const amount = amountText.ok ? toMinorUnits(amountText.text, currency) : amountText;
    if (!amount.ok) differences.push(`amount unreadable: ${amount.error}`);
    else if (amount.value !== movement.amount)
      differences.push(`amount ${amount.value} minor units, webhook ${movement.amount}`);
    // verif-hash covers nothing, so the webhook's meta.account is anyone's to write: the
    // account credited is Flutterwave's record of it, by the parser's rule (parse.ts).
    const account =
      metadataAccount(tx.meta) ??
      metadataAccount(tx.meta_data) ??
      (tx.customer?.id != null ? String(tx.customer.id) : null);
    if (account !== movement.account)
      differences.push(`account ${account ?? "(none)"}, webhook ${movement.account ?? "(none)"}`);
    if (!amount.ok || differences.length > 0)
      return {
        ok: false,
        reason: "mismatch",
        message: `Flutterwave's record of transaction ${tx.id} disagrees with the webhook: ${differences.join("; ")}`,
      };
    return { ok: true, movement: { ...movement, account, currency, amount: amount.value } };
  };
}

export const confirmFlutterwave = flutterwaveConfirmer();
