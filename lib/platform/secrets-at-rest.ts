// Webhook signing secrets (endpoint_secrets.secret) and provider credentials
// (provider_endpoints.settings: apiKey, secretKey, clientSecret, any *key/*secret/
// *token/*password) are stored sealed with AES-256-GCM: a read of the database
// alone gives neither webhook forgery nor provider API access.
//   v1:<keyId>:<iv>:<tag>:<ciphertext>   (base64url; keyId = first 8 hex of SHA-256(key))
// The key id in every value lets old keys be retired: `tally secrets rotate-key`
// re-seals each value under TALLY_ENCRYPTION_KEY while TALLY_ENCRYPTION_KEYS still
// opens the old ones. Decrypted values live only in process memory (the endpoint
// cache, the worker's settings read); they are opened when the cache is filled,
// not per request, so the acknowledgement stays one round trip.
// A value without the v1: prefix is a row written before encryption: it is read
// as is until the data step (`tally db migrate`, `npm start`) seals it.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { config } from "@/lib/platform/config";
import { defaultDataDir } from "@/lib/platform/embedded-postgres";

const PREFIX = "v1:";

/** Setting names whose values are credentials (also masked in answers and the audit log). */
export const CREDENTIAL_SETTING = /key|secret|token|password/i;

export class EncryptionKeyError extends Error {}

type Key = { id: string; bytes: Buffer };
type Keyring = { current: Key; byId: Map<string, Key> };

function parseKey(text: string, name: string): Key {
  const t = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
  if (bytes.length !== 32)
    throw new EncryptionKeyError(
      `${name} must be 32 bytes, as base64 (44 characters) or hex (64); generate one with: openssl rand -base64 32`,
    );
  return { id: createHash("sha256").update(bytes).digest("hex").slice(0, 8), bytes };
}

/** The embedded default: a key made once in .tally/encryption.key, readable by its owner only. */
export function keyFileFor(dir: string): string {
  const file = path.join(dir, "encryption.key");
  try {
    return readFileSync(file, "utf8").trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32).toString("base64");
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process (web, worker, CLI starting together) made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(file, "utf8").trim();
    throw error;
  }
  chmodSync(file, 0o600);
  return key;
}

let keyring: Keyring | undefined;

function keys(): Keyring {
  if (keyring) return keyring;
  const c = config();
  let currentText = c.TALLY_ENCRYPTION_KEY;
  if (!currentText) {
    if (c.DATABASE_URL)
      throw new EncryptionKeyError(
        "TALLY_ENCRYPTION_KEY is not set: with DATABASE_URL, every web and worker process needs the same 32-byte key (openssl rand -base64 32) to read and write signing secrets and provider API keys",
      );
    currentText = keyFileFor(path.dirname(defaultDataDir(c.TALLY_DATA_DIR)));
  }
  const current = parseKey(currentText, "TALLY_ENCRYPTION_KEY");
  const byId = new Map([[current.id, current]]);
  for (const old of c.TALLY_ENCRYPTION_KEYS.split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const k = parseKey(old, "each of TALLY_ENCRYPTION_KEYS");
    if (!byId.has(k.id)) byId.set(k.id, k);
  }
  keyring = { current, byId };
  return keyring;
}

/** Tests change the keys between cases. */
export function forgetEncryptionKeys(): void {
  keyring = undefined;
}

export const isSealed = (value: string): boolean => value.startsWith(PREFIX);
export const keyIdOf = (value: string): string | null => (isSealed(value) ? (value.split(":")[1] ?? null) : null);
export const currentKeyId = (): string => keys().current.id;

export function seal(plain: string): string {
  const { current } = keys();
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", current.bytes, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [
    PREFIX + current.id,
    iv.toString("base64url"),
    cipher.getAuthTag().toString("base64url"),
    body.toString("base64url"),
  ].join(":");
}

export function open(stored: string): string {
  if (!isSealed(stored)) return stored;
  const [, keyId, iv, tag, body] = stored.split(":");
  const key = keys().byId.get(keyId ?? "");
  if (!key || iv === undefined || tag === undefined || body === undefined) {
    throw new EncryptionKeyError(
      `a secret is sealed under encryption key ${keyId}, which neither TALLY_ENCRYPTION_KEY (key ${keys().current.id}) nor TALLY_ENCRYPTION_KEYS provides: start with the key it was written under, or list it in TALLY_ENCRYPTION_KEYS`,
    );
  }
  const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new EncryptionKeyError(
      `a secret sealed under key ${keyId} fails its integrity check: the stored value was altered`,
    );
  }
}

const mapCredentials = (settings: Record<string, unknown>, f: (v: string) => string) =>
  Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [
      k,
      CREDENTIAL_SETTING.test(k) && typeof v === "string" && v !== "" ? f(v) : v,
    ]),
  );

/** Settings as stored: every credential sealed (already sealed ones kept). */
export const sealSettings = (settings: Record<string, unknown>) =>
  mapCredentials(settings, (v) => (isSealed(v) ? v : seal(v)));
/** Settings as the code uses them: every credential opened. */
export const openSettings = (settings: Record<string, unknown>) => mapCredentials(settings, open);
