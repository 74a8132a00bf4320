// Route handlers as one wrapped call (after dub's `withWorkspace`): who is asking
// (session or token), the tenant they may see (404 otherwise, before any role
// check, so a 403 never confirms a tenant exists), their role, then the path
// parameters, the query and the JSON body against zod schemas (400 naming the
// field). The handler is left with the domain call; a refusal it returns becomes
// its status through lib/platform/http.ts, a database outage a 503, a bug a 500.
//
// Order of the checks, kept from the hand-written routes: authentication,
// tenant, people-only, role, path parameters, query, body. The body is read only
// when a schema asks for it, so a streamed upload is read by its handler alone.
import type { z } from "zod";
import type { Actor } from "@/lib/admin/audit";
import { actorOf, requireAccess, type Principal, type UserPrincipal, type VisibleTenant } from "@/lib/auth/access";
import type { Role } from "@/lib/generated/prisma/enums";
import { accessError, domainError, handled, jsonBody, parseInput } from "@/lib/platform/http";
import type { Refusal } from "@/lib/platform/refusal";

type Schema = z.ZodType;
type Shape = Record<string, Schema>;
type Infer<S> = S extends Schema ? z.infer<S> : undefined;

export type RouteSpec<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Shape,
  U extends boolean | string,
> = {
  /** Roles allowed; any role when omitted. */
  roles?: readonly Role[];
  /** People only, not API tokens; a string is the refusal's message. */
  usersOnly?: U;
  /** The JSON body (an empty body is `{}`). */
  body?: B;
  /** The query string, as one object of strings. */
  query?: Q;
  /** Path parameters other than the tenant, each checked on its own (a bad one is a 400 naming it). */
  params?: P;
};

export type RouteInput<B, Q, P extends Shape, U> = {
  request: Request;
  principal: U extends false ? Principal : UserPrincipal;
  actor: Actor;
  body: Infer<B>;
  query: Infer<Q>;
  params: { [K in keyof P]: z.infer<P[K]> };
};

/** What a handler answers: a response, or a domain refusal to map to its status. */
export type RouteAnswer = Response | Pick<Refusal, "ok" | "reason" | "message">;

type NextContext = { params: Promise<Record<string, string | string[] | undefined>> };
type RouteHandler = (request: Request, context: NextContext) => Promise<Response>;

async function validated(
  request: Request,
  raw: Record<string, unknown>,
  spec: RouteSpec<Schema | undefined, Schema | undefined, Shape, boolean | string>,
) {
  const params: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(spec.params ?? {})) {
    const r = parseInput(schema, raw[name], name);
    if (!r.ok) return r;
    params[name] = r.value;
  }
  let query: unknown;
  if (spec.query) {
    const q = parseInput(spec.query, Object.fromEntries(new URL(request.url).searchParams));
    if (!q.ok) return q;
    query = q.value;
  }
  let body: unknown;
  if (spec.body) {
    const text = await jsonBody(request);
    if (!text.ok) return text;
    const b = parseInput(spec.body, text.value);
    if (!b.ok) return b;
    body = b.value;
  }
  return { ok: true as const, params, query, body };
}

const answer = (a: RouteAnswer): Response => (a instanceof Response ? a : domainError(a));

/** After access: validate the input, call the handler with it (and `extra`), map what it returns. */
async function run<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Shape,
  U extends boolean | string,
  X,
>(
  request: Request,
  raw: Record<string, unknown>,
  spec: RouteSpec<B, Q, P, U>,
  accessPrincipal: unknown,
  extra: X,
  handler: (input: RouteInput<B, Q, P, U> & X) => Promise<RouteAnswer>,
): Promise<Response> {
  const input = await validated(request, raw, spec);
  if (!input.ok) return input.response;
  const principal = accessPrincipal as RouteInput<B, Q, P, U>["principal"];
  return answer(
    await handler({
      request,
      principal,
      actor: actorOf(principal),
      ...extra,
      ...(input as Pick<RouteInput<B, Q, P, U>, "body" | "query" | "params">),
    } as RouteInput<B, Q, P, U> & X),
  );
}

/** A route under /api/v1/tenants/{tenant}/…: the caller must see the tenant (404 otherwise). */
export function withTenant<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Shape = {},
  U extends boolean | string = false,
>(
  spec: RouteSpec<B, Q, P, U>,
  handler: (input: RouteInput<B, Q, P, U> & { tenant: VisibleTenant }) => Promise<RouteAnswer>,
): RouteHandler {
  return handled(async (request: Request, context: NextContext) => {
    const raw = (await context?.params) ?? {};
    const slug = typeof raw.tenant === "string" ? raw.tenant : "";
    const access = await requireAccess(request, { tenant: slug, roles: spec.roles, usersOnly: spec.usersOnly });
    if (!access.ok) return accessError(access);
    return run(request, raw, spec, access.principal, { tenant: access.tenant }, handler);
  });
}

/** A route outside any tenant (/api/v1/tenants, /api/v1/users, /api/auth/session): any signed-in caller the spec allows. */
export function withPrincipal<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Shape = {},
  U extends boolean | string = false,
>(spec: RouteSpec<B, Q, P, U>, handler: (input: RouteInput<B, Q, P, U>) => Promise<RouteAnswer>): RouteHandler {
  return handled(async (request: Request, context: NextContext) => {
    const access = await requireAccess(request, { roles: spec.roles, usersOnly: spec.usersOnly });
    if (!access.ok) return accessError(access);
    return run(request, (await context?.params) ?? {}, spec, access.principal, {}, handler);
  });
}
