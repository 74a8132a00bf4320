// Talking to the identity provider through openid-client: discovery (cached per process),
// the authorization request (code flow, PKCE S256, state, nonce) and the callback's
// checks. openid-client validates the ID token's signature, issuer, audience, expiry and
// nonce and the response's state; this module turns its failures into typed refusals.
import * as oidc from "openid-client";
import type { RoleGrant } from "@/lib/auth/oidc/role-map";
import type { OidcRefusal } from "@/lib/auth/oidc/refusals";
import { config } from "@/lib/platform/config";

export type OidcSettings = {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  redirectUri: URL;
  baseUrl: URL;
  name: string;
  scopes: string;
  groupsClaim: string;
  roleMap: RoleGrant[];
};

export const CALLBACK_PATH = "/api/auth/oidc/callback";

/** The single sign-on settings, or null when it is not configured (config.ts requires all or none). */
export function oidcSettings(): OidcSettings | null {
  const c = config();
  if (!c.TALLY_OIDC_ISSUER || !c.TALLY_OIDC_CLIENT_ID || !c.TALLY_OIDC_CLIENT_SECRET) return null;
  if (!c.TALLY_OIDC_REDIRECT_BASE_URL || !c.TALLY_OIDC_ROLE_MAP) return null;
  const base = new URL(c.TALLY_OIDC_REDIRECT_BASE_URL.replace(/\/*$/, "/"));
  return {
    issuer: new URL(c.TALLY_OIDC_ISSUER),
    clientId: c.TALLY_OIDC_CLIENT_ID,
    clientSecret: c.TALLY_OIDC_CLIENT_SECRET,
    redirectUri: new URL(CALLBACK_PATH.slice(1), base),
    baseUrl: base,
    name: c.TALLY_OIDC_NAME,
    scopes: c.TALLY_OIDC_SCOPES,
    groupsClaim: c.TALLY_OIDC_GROUPS_CLAIM,
    roleMap: c.TALLY_OIDC_ROLE_MAP,
  };
}

let discovered: { key: string; configuration: Promise<oidc.Configuration> } | undefined;

/** The provider's metadata and keys, fetched once per process (a failure is not cached). */
async function providerConfiguration(s: OidcSettings): Promise<oidc.Configuration> {
  const key = `${s.issuer.href} ${s.clientId}`;
  if (discovered?.key !== key) {
    const configuration = oidc.discovery(
      s.issuer,
      s.clientId,
      { redirect_uris: [s.redirectUri.href], response_types: ["code"] },
      oidc.ClientSecretBasic(s.clientSecret),
      // config.ts accepts http only for a loopback issuer (a test provider).
      { execute: s.issuer.protocol === "http:" ? [oidc.allowInsecureRequests] : [] },
    );
    discovered = { key, configuration };
    configuration.catch(() => {
      if (discovered?.configuration === configuration) discovered = undefined;
    });
  }
  return discovered.configuration;
}

/** Tests point Tally at a new provider between cases. */
export function forgetOidcProviderForTests(): void {
  discovered = undefined;
}

/** What the callback must find again: generated here, kept server-side until the callback. */
export type PendingSignIn = { state: string; nonce: string; codeVerifier: string };

export async function authorizationRequest(
  s: OidcSettings,
): Promise<{ ok: true; url: URL; pending: PendingSignIn } | OidcRefusal> {
  let configuration: oidc.Configuration;
  try {
    configuration = await providerConfiguration(s);
  } catch (error) {
    return providerFailure(s, error);
  }
  const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: s.redirectUri.href,
    scope: s.scopes,
    response_type: "code",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: "S256",
  });
  return { ok: true, url, pending };
}

export type IdTokenClaims = oidc.IDToken;

/**
 * Exchanges the code the browser brought for tokens and checks them against the sign-in
 * this browser started. The callback URL is rebuilt from the configured redirect URI (not
 * the request's Host, which a proxy may have rewritten), since the provider compares them.
 */
export async function redeemCallback(
  s: OidcSettings,
  query: URLSearchParams,
  pending: PendingSignIn,
): Promise<{ ok: true; claims: IdTokenClaims } | OidcRefusal> {
  let configuration: oidc.Configuration;
  try {
    configuration = await providerConfiguration(s);
  } catch (error) {
    return providerFailure(s, error);
  }
  const callbackUrl = new URL(s.redirectUri);
  for (const [k, v] of query) callbackUrl.searchParams.append(k, v);
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) return { ok: false, reason: "invalid_token", message: "The identity provider sent no ID token." };
    return { ok: true, claims };
  } catch (error) {
    return callbackFailure(s, error);
  }
}

type Coded = { code?: string; message?: string; cause?: unknown; error?: string; error_description?: string };

/** The claim a failed comparison was about: openid-client wraps oauth4webapi's error, whose cause names it. */
function comparedClaim(error: Coded): string | undefined {
  const inner = error.cause as Coded | undefined;
  const details = inner?.cause as { claim?: string } | undefined;
  return details?.claim;
}

function providerFailure(s: OidcSettings, error: unknown): OidcRefusal {
  const e = (error ?? {}) as Coded;
  if (e.code === "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED" || e.code === "OAUTH_INVALID_RESPONSE")
    return {
      ok: false,
      reason: "provider_misconfigured",
      message: `The identity provider's discovery document at ${s.issuer.href} does not describe that issuer, so Tally will not trust it. Ask an admin to check TALLY_OIDC_ISSUER.`,
    };
  console.error("[tally] single sign-on: identity provider unreachable", e.code ?? "", e.message ?? "");
  return {
    ok: false,
    reason: "provider_unavailable",
    message: `The identity provider (${s.issuer.host}) could not be reached. Try again shortly, or sign in with a password.`,
  };
}

function callbackFailure(s: OidcSettings, error: unknown): OidcRefusal {
  const e = (error ?? {}) as Coded;
  if (error instanceof oidc.AuthorizationResponseError)
    return {
      ok: false,
      reason: "provider_refused",
      message: `The identity provider did not sign you in: ${e.error_description || e.error || "no reason given"}.`,
    };
  if (error instanceof oidc.ResponseBodyError)
    return {
      ok: false,
      reason: "token_refused",
      message: `The identity provider would not complete this sign-in (${e.error}${e.error_description ? `: ${e.error_description}` : ""}). Start again.`,
    };
  if (e.code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED") {
    const claim = comparedClaim(e);
    if (claim === "nonce")
      return {
        ok: false,
        reason: "nonce_mismatch",
        message: "The ID token does not belong to the sign-in this browser started (nonce). Start again.",
      };
    if (claim === "aud" || claim === "azp")
      return {
        ok: false,
        reason: "audience_mismatch",
        message: `The ID token was issued to another application, not to Tally (${s.clientId}).`,
      };
    if (claim === "iss")
      return {
        ok: false,
        reason: "issuer_mismatch",
        message: `The ID token was not issued by the configured identity provider (${s.issuer.href}).`,
      };
  }
  if (e.code === "OAUTH_INVALID_RESPONSE" && /"state"/.test((e.cause as Coded | undefined)?.message ?? ""))
    return {
      ok: false,
      reason: "state_mismatch",
      message: "This answer from the identity provider belongs to another sign-in (state). Start again.",
    };
  if (e.code === undefined && !(error instanceof oidc.ClientError)) return providerFailure(s, error);
  console.error("[tally] single sign-on: ID token refused", e.code ?? "", e.message ?? "");
  return {
    ok: false,
    reason: "invalid_token",
    message: "The identity provider's answer did not pass Tally's checks (signature, expiry or format). Start again.",
  };
}
