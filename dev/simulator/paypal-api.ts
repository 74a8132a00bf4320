// PayPal's REST API as the simulators play it, answering from the day's truth:
// POST /v1/oauth2/token (client credentials, HTTP basic) gives a bearer token, and
// GET /v2/payments/captures/{id} and /v2/payments/refunds/{id} return the capture or
// refund the webhook announced, as PayPal's API shapes it; reversals (refund objects)
// and disputes (GET /v1/customer/disputes/{id}) are served as they were added. The worker asks it before
// posting a PayPal movement (lib/providers/paypal/confirm.ts); a non-PayPal base URL
// is allowed there only where simulators are.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { captureResource, refundResource } from "@/lib/providers/paypal/simulate";
import type { SimMovement } from "@/lib/providers/simulation/script";

const TOKEN_SECONDS = 32_400;

/** The captures and refunds each REST app (client id and secret) may see, by PayPal id. */
export class PaypalAccounts {
  private readonly byClient = new Map<
    string,
    {
      secret: string;
      movements: Map<string, SimMovement>;
      refunded: Map<string, number>;
      /** Resources added as they are (reversals, disputes), by "refunds/{id}" or "disputes/{id}". */
      resources: Map<string, object>;
    }
  >();
  private readonly tokens = new Map<string, string>();

  /** The tenant's PayPal movements, visible to its REST app. */
  add(clientId: string, clientSecret: string, movements: readonly SimMovement[]): this {
    const mine = this.client(clientId, clientSecret);
    for (const m of movements) {
      if (m.provider !== "paypal") continue;
      mine.movements.set(m.reference, m);
      if (m.kind === "REFUND" && m.paymentReference)
        mine.refunded.set(m.paymentReference, (mine.refunded.get(m.paymentReference) ?? 0) + m.amount);
    }
    return this;
  }

  /** A reversal or a dispute as PayPal's API will show it to the REST app; added again, it replaces the earlier one (a dispute moves on). */
  addResource(
    clientId: string,
    clientSecret: string,
    kind: "refunds" | "disputes",
    resource: { id?: string; dispute_id?: string },
  ): this {
    const id = kind === "disputes" ? resource.dispute_id : resource.id;
    if (!id) throw new Error(`a ${kind} resource needs its id`);
    this.client(clientId, clientSecret).resources.set(`${kind}/${id}`, resource);
    return this;
  }

  private client(clientId: string, clientSecret: string) {
    const mine = this.byClient.get(clientId) ?? {
      secret: clientSecret,
      movements: new Map(),
      refunded: new Map(),
      resources: new Map(),
    };
    mine.secret = clientSecret;
    this.byClient.set(clientId, mine);
    return mine;
  }

  issueToken(authorization: string | undefined): string | null {
    const basic = /^Basic (.+)$/.exec(authorization ?? "")?.[1];
    if (!basic) return null;
    const text = Buffer.from(basic, "base64").toString("utf8");
    const at = text.indexOf(":");
    const [id, secret] = [text.slice(0, at), text.slice(at + 1)];
    if (at < 0 || this.byClient.get(id)?.secret !== secret) return null;
    const token = `A21AA${randomBytes(24).toString("base64url")}`;
    this.tokens.set(token, id);
    return token;
  }

  /** The resource PayPal's API would return, or why not. */
  lookup(
    authorization: string | undefined,
    kind: "captures" | "refunds" | "disputes",
    id: string,
  ): object | "unauthorized" | "not_found" {
    const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
    const client = this.byClient.get(this.tokens.get(token) ?? "");
    if (!client) return "unauthorized";
    const added = client.resources.get(`${kind}/${id}`);
    if (added) return added;
    if (kind === "disputes") return "not_found";
    const m = client.movements.get(id);
    if (!m || (kind === "refunds") !== (m.kind === "REFUND")) return "not_found";
    if (m.kind === "REFUND") return refundResource(m);
    // A refunded capture keeps its id and amount; only its status moves on, as PayPal's does.
    const refunded = client.refunded.get(m.reference) ?? 0;
    return {
      ...captureResource(m),
      status: refunded === 0 ? "COMPLETED" : refunded >= m.amount ? "REFUNDED" : "PARTIALLY_REFUNDED",
    };
  }
}

/** Answers the token and payments endpoints; false when the request is for something else. */
export function servePaypalApi(req: IncomingMessage, res: ServerResponse, accounts: PaypalAccounts): boolean {
  const path = new URL(req.url ?? "/", "http://sim").pathname;
  const send = (status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  if (req.method === "POST" && path === "/v1/oauth2/token") {
    req.resume();
    const token = accounts.issueToken(req.headers.authorization);
    if (!token)
      return (send(401, { error: "invalid_client", error_description: "Client Authentication failed" }), true);
    send(200, {
      scope: "https://uri.paypal.com/services/payments/payment",
      access_token: token,
      token_type: "Bearer",
      app_id: "APP-80W284485P519543T",
      expires_in: TOKEN_SECONDS,
      nonce: randomBytes(8).toString("hex"),
    });
    return true;
  }
  const match =
    /^\/v2\/payments\/(captures|refunds)\/([^/]+)$/.exec(path) ?? /^\/v1\/customer\/(disputes)\/([^/]+)$/.exec(path);
  if (req.method !== "GET" || !match) return false;
  const found = accounts.lookup(
    req.headers.authorization,
    match[1] as "captures" | "refunds" | "disputes",
    decodeURIComponent(match[2]!),
  );
  if (found === "unauthorized")
    return (send(401, { error: "invalid_token", error_description: "Token signature verification failed" }), true);
  if (found === "not_found") {
    send(404, {
      name: "RESOURCE_NOT_FOUND",
      message: "The specified resource does not exist.",
      details: [
        {
          issue: "INVALID_RESOURCE_ID",
          description: "Specified resource ID does not exist. Please check the resource ID and try again.",
        },
      ],
    });
    return true;
  }
  send(200, found);
  return true;
}
