// GET /api/v1/tenants/{tenant}/bank/statements: imported statements, newest first (?before=).
// POST ?format=camt053|csv&name=&layout={json}: a bank statement as the raw body
// (camt.053 XML, or CSV in the layout given), imported and matched to the payouts;
// audited as bank.import. A file that cannot be read exactly is refused whole (422,
// naming line or row), a layout that cannot work is a 400, the same file again a 409.
import { z } from "zod";
import { withTenant } from "@/lib/auth/with-access";
import { ACTION_ROLES, SECTION_ROLES } from "@/lib/auth/roles";
import { STATEMENT_FORMATS } from "@/lib/bank/import";
import { listStatements } from "@/lib/bank/statements";
import { uploadStatement } from "@/lib/bank/upload";
import { config } from "@/lib/platform/config";
import { json } from "@/lib/platform/http";
import { bigintId } from "@/lib/platform/query-params";

export const dynamic = "force-dynamic";

const blank = (v: unknown) => (v === "" ? undefined : v);
const List = z.object({
  before: z.preprocess(blank, bigintId.optional()),
  limit: z.preprocess(blank, z.coerce.number().int().min(1).max(100).default(25)),
});

export const GET = withTenant({ roles: SECTION_ROLES.bank, query: List }, async ({ tenant, query }) =>
  json(await listStatements(tenant.id, { limit: query.limit, beforeId: query.before }), {
    headers: { "cache-control": "no-store" },
  }),
);

const Upload = z.object({
  format: z.enum(STATEMENT_FORMATS),
  name: z.preprocess(blank, z.string().max(255).optional()),
  layout: z.preprocess(
    blank,
    z
      .string()
      .max(8192)
      .transform((text, ctx) => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          ctx.addIssue({ code: "custom", message: "must be the CSV layout as JSON" });
          return z.NEVER;
        }
      })
      .optional(),
  ),
});

// No body schema: the wrapper checks access before a byte of the body is read, and the body is streamed.
export const POST = withTenant(
  { roles: ACTION_ROLES.importBank, query: Upload },
  async ({ request, tenant, actor, query }) => {
    const declared = Number(request.headers.get("content-length") ?? Number.NaN);
    const r = await uploadStatement({
      tenantId: tenant.id,
      body: request.body,
      declaredBytes: Number.isFinite(declared) ? declared : null,
      maxBytes: config().TALLY_RECON_UPLOAD_MAX_BYTES,
      format: query.format,
      layout: query.layout,
      fileName: query.name,
      actor,
    });
    return r.ok ? json(r.value, { status: 201 }) : r;
  },
);
