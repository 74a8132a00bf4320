// A real OpenID provider for tests and e2e: the `oidc-provider` package (a certified
// implementation) on a free loopback port, with a confidential client for Tally, people
// whose ID tokens carry group claims, and its own login and consent pages (its
// devInteractions: any password is accepted, the login names the account).
//
// `tamper` makes the provider itself misbehave for one test: the ID token it returns
// from the token endpoint is re-signed with its own key after one claim is changed,
// so Tally sees a correctly signed token that is for another audience, from another
// issuer or for another nonce. Run as a script it serves until killed (the e2e suite).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from "jose";
import Provider from "oidc-provider";

export type TestAccount = { email: string; name: string; groups: string[]; emailVerified?: boolean };

export const TEST_ACCOUNTS: Record<string, TestAccount> = {
  alice: { email: "alice@sso.test", name: "Alice Finance", groups: ["everyone", "acme-finance"] },
  bob: { email: "bob@sso.test", name: "Bob Nobody", groups: ["everyone", "contractors"] },
  carol: { email: "carol@sso.test", name: "Carol Admin", groups: ["tally-admins"] },
  dave: { email: "dave@sso.test", name: "Dave Both", groups: ["acme-ops", "acme-finance"] },
  erin: { email: "erin@sso.test", name: "Erin Ops", groups: ["acme-ops"] },
};

export type Tamper = null | { claim: "aud" | "iss" | "nonce"; value: string };

export type TestOidcProvider = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Set for the next token responses until set back to null. */
  tamper(t: Tamper): void;
  close(): Promise<void>;
};

export async function startOidcProvider(options: {
  redirectUris: string[];
  accounts?: Record<string, TestAccount>;
  port?: number;
  clientId?: string;
  clientSecret?: string;
}): Promise<TestOidcProvider> {
  const accounts = options.accounts ?? TEST_ACCOUNTS;
  const clientId = options.clientId ?? "tally";
  const clientSecret = options.clientSecret ?? "tally-test-client-secret-0123456789";
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: "test-key", use: "sig", alg: "RS256" };
  let tampering: Tamper = null;

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ["test-cookie-key-not-secret"] },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
      groups: ["groups"],
    },
    scopes: ["openid", "email", "profile", "groups"],
    // Claims in the ID token itself, which is all Tally reads (no userinfo call).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    // Short lives, said out loud (the defaults print a notice each).
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            email: account.email,
            email_verified: account.emailVerified ?? true,
            name: account.name,
            groups: account.groups,
          };
        },
      };
    },
  });
  // The dev interactions warn once per process that they are for development; they are.
  provider.on("server_error", (_ctx, error) => console.error("[oidc-provider]", error));

  const key = await importJWK(jwk, "RS256");
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (!tampering || ctx.path !== "/token" || !body?.id_token) return;
    const claims = { ...decodeJwt(body.id_token), [tampering.claim]: tampering.value };
    const header = decodeProtectedHeader(body.id_token);
    body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: header.kid }).sign(key);
  });

  server.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    tamper: (t) => {
      tampering = t;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// `tsx dev/oidc/provider.ts`: the e2e suite's provider, on TALLY_E2E_OIDC_PORT, with
// Tally's callback on TALLY_E2E_PORT registered.
if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.TALLY_E2E_OIDC_PORT);
  const tally = Number(process.env.TALLY_E2E_PORT);
  const p = await startOidcProvider({
    port,
    redirectUris: [`http://localhost:${tally}/api/auth/oidc/callback`],
  });
  console.log(`[oidc-provider] ${p.issuer} ready`);
}
