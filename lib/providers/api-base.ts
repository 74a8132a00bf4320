// Where a provider's API key may be sent. An endpoint's settings name the API's base
// URL so that a simulator or a proxy can stand in, but whoever can change the settings
// could otherwise point the base at their own host and be sent the tenant's secret key
// with every reconciliation run, gap check and confirmation. So: https to the
// provider's own hosts always; any other base only where simulators are allowed
// (outside production, or TALLY_ALLOW_INSECURE_SIMULATORS=1), and then plain http only
// to this machine, so the key never crosses a network in clear.
import { config } from "@/lib/platform/config";
import type { ProviderApi } from "@/lib/providers/types";

export type ApiBase = { ok: true; url: URL } | { ok: false; message: string };

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function providerApiBase(text: string, o: ProviderApi): ApiBase {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: `settings.apiBaseUrl must be a URL (got ${JSON.stringify(text)})` };
  }
  if (url.username || url.password)
    return { ok: false, message: `settings.apiBaseUrl must not carry credentials (got ${url.host})` };
  if (url.protocol === "https:" && o.hosts.includes(url.hostname) && !url.port) return { ok: true, url };
  const c = config();
  if (c.NODE_ENV === "production" && !c.TALLY_ALLOW_INSECURE_SIMULATORS)
    return {
      ok: false,
      message: `settings.apiBaseUrl ${url.origin} is not ${o.provider}'s API (${o.hosts.join(", ")}); other hosts are for simulators, refused in production unless TALLY_ALLOW_INSECURE_SIMULATORS=1`,
    };
  if (url.protocol === "https:") return { ok: true, url };
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return { ok: true, url };
  return { ok: false, message: `settings.apiBaseUrl must be https (got ${url.origin})` };
}

/** The base as a string without a trailing slash, or the refusal as an error (for the settlement sources, which throw). */
export function apiBaseOrThrow(text: string, o: ProviderApi): string {
  const base = providerApiBase(text, o);
  if (!base.ok) throw new Error(base.message);
  return base.url.href.replace(/\/$/, "");
}
