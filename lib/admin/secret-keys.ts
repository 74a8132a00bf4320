// The encryption key's lifecycle over the stored secrets: the start-up check (a
// wrong or missing key fails loudly before anything serves), the data step that
// seals rows written before encryption, and rotation to a new key, audited.
// Rows are few (one per endpoint and secret), so each step reads them all.
import { recordAudit, type Actor } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import {
  currentKeyId,
  CREDENTIAL_SETTING,
  EncryptionKeyError,
  isSealed,
  keyIdOf,
  open,
  seal,
} from "@/lib/platform/secrets-at-rest";

type Stored = {
  secrets: { id: string; secret: string }[];
  endpoints: { id: string; settings: Record<string, unknown> }[];
};

async function stored(): Promise<Stored> {
  const [secrets, endpoints] = await Promise.all([
    prisma.endpointSecret.findMany({ select: { id: true, secret: true } }),
    prisma.providerEndpoint.findMany({ select: { id: true, settings: true } }),
  ]);
  return {
    secrets,
    endpoints: endpoints.map((e) => ({ id: e.id, settings: (e.settings ?? {}) as Record<string, unknown> })),
  };
}

const credentialValues = (settings: Record<string, unknown>) =>
  Object.entries(settings)
    .filter(([k, v]) => CREDENTIAL_SETTING.test(k) && typeof v === "string" && v !== "")
    .map(([, v]) => v as string);

/** Opens one value per key id in use: a key that is missing, or not the one a value was sealed with, throws naming it. */
export async function checkEncryptionKeys(): Promise<{ keyIds: string[] }> {
  const s = await stored();
  const sample = new Map<string, string>();
  for (const v of [...s.secrets.map((r) => r.secret), ...s.endpoints.flatMap((e) => credentialValues(e.settings))]) {
    const id = keyIdOf(v);
    if (id && !sample.has(id)) sample.set(id, v);
  }
  currentKeyId(); // a malformed or (with DATABASE_URL) missing key fails here even on an empty database
  for (const v of sample.values()) open(v);
  return { keyIds: [...sample.keys()] };
}

/** Re-seals every value not sealed under the current key (plaintext included); returns how many rows changed. */
async function reseal(
  select: (value: string) => boolean,
): Promise<{ secrets: number; endpoints: number; fromKeys: string[] }> {
  const s = await stored();
  const fromKeys = new Set<string>();
  const again = (v: string) => {
    fromKeys.add(keyIdOf(v) ?? "plaintext");
    return seal(open(v));
  };
  const secrets = s.secrets.filter((r) => select(r.secret)).map((r) => ({ id: r.id, secret: again(r.secret) }));
  const endpoints = s.endpoints
    .filter((e) => credentialValues(e.settings).some(select))
    .map((e) => ({
      id: e.id,
      settings: Object.fromEntries(
        Object.entries(e.settings).map(([k, v]) => [
          k,
          CREDENTIAL_SETTING.test(k) && typeof v === "string" && v !== "" && select(v) ? again(v) : v,
        ]),
      ),
    }));
  await prisma.$transaction(async (tx) => {
    for (const r of secrets) await tx.endpointSecret.update({ where: { id: r.id }, data: { secret: r.secret } });
    for (const e of endpoints)
      await tx.providerEndpoint.update({ where: { id: e.id }, data: { settings: e.settings as object } });
  });
  if (secrets.length || endpoints.length) forgetEndpoints();
  return { secrets: secrets.length, endpoints: endpoints.length, fromKeys: [...fromKeys] };
}

/** The data step after the SQL migrations: rows written before encryption are sealed. Idempotent (sealed rows carry the v1: prefix). */
export function sealPlaintextSecrets() {
  return reseal((v) => !isSealed(v));
}

/** `tally secrets rotate-key`: every value re-sealed under TALLY_ENCRYPTION_KEY; old keys may then leave TALLY_ENCRYPTION_KEYS. */
export async function rotateEncryptionKey(
  actor: Actor,
): Promise<{ secrets: number; endpoints: number; fromKeys: string[]; toKey: string }> {
  const toKey = currentKeyId();
  const r = await reseal((v) => keyIdOf(v) !== toKey);
  await prisma.$transaction((tx) =>
    recordAudit(tx, {
      actor,
      action: "secrets.rotate_key",
      subjectType: "encryption_key",
      subjectId: toKey,
      reason: "re-sealed stored secrets under the current key",
      details: { ...r, toKey },
    }),
  );
  return { ...r, toKey };
}

export { EncryptionKeyError };
