// What proposing and deciding on a case both need before the domain call: an
// accountant (a person: four-eyes is about people, so no API tokens), the case
// id from the path, and the JSON body checked against the action's schema.
import type { z } from "zod";
import { requireAccess } from "@/lib/auth/access";
import { ACTION_ROLES } from "@/lib/auth/roles";
import { accessError, jsonBody, parseInput } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export type CaseParams = { params: Promise<{ tenant: string; id: string }> };

export type CaseAction<T> =
  | { ok: true; tenantId: string; caseId: bigint; actor: { userId: string; label: string }; input: T }
  | { ok: false; response: Response };

export async function readCaseAction<S extends z.ZodType>(request: Request, { params }: CaseParams, schema: S): Promise<CaseAction<z.infer<S>>> {
  const { tenant, id } = await params;
  const access = await requireAccess(request, { tenant, roles: ACTION_ROLES.decideCases });
  if (!access.ok) return { ok: false, response: accessError(access) };
  const p = access.principal;
  if (p.kind !== "user") return { ok: false, response: accessError({ status: 403, code: "forbidden", message: "Cases are decided by people: sign in as an accountant; API tokens cannot propose or approve" }) };
  const caseId = parseInput(bigintId, id);
  if (!caseId.ok) return caseId;
  const body = await jsonBody(request);
  if (!body.ok) return body;
  const input = parseInput(schema, body.value);
  if (!input.ok) return input;
  return { ok: true, tenantId: access.tenant.id, caseId: caseId.value, actor: { userId: p.userId, label: p.email }, input: input.value };
}
