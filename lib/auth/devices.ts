// Known devices: after a successful sign-in the browser gets a long-lived
// cookie naming a random device id, signed for that user. A device the user
// has signed in from before is not held back by failures others caused at the
// same address (an attacker guessing an accountant's password from the office
// NAT must not keep the accountant out); its own failures back it off alone.
// The key is the user's current password hash: it never leaves the server, and
// a password change forgets every device at once.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const DEVICE_COOKIE = "tally_device";
const MAX_AGE_SECONDS = 180 * 24 * 3600;

type Holder = { id: string; passwordHash: string | null };

function mac(user: Holder, deviceId: string): Buffer {
  return createHmac("sha256", user.passwordHash ?? "")
    .update(`tally-device\u0000${user.id}\u0000${deviceId}`)
    .digest();
}

/** The device id if the cookie was issued to this user under their current password, else null. */
export function knownDevice(cookieValue: string | null, user: Holder | null): string | null {
  if (!cookieValue || !user?.passwordHash) return null;
  const [deviceId, signature, extra] = cookieValue.split(".");
  if (!deviceId || !signature || extra !== undefined || !/^[A-Za-z0-9_-]{22}$/.test(deviceId)) return null;
  const sent = Buffer.from(signature, "base64url");
  const expected = mac(user, deviceId);
  return sent.length === expected.length && timingSafeEqual(sent, expected) ? deviceId : null;
}

/** The cookie value for a device: the same id when it was already known, else a new one. */
export function deviceCookieValue(user: Holder, deviceId: string | null): string {
  const id = deviceId ?? randomBytes(16).toString("base64url");
  return `${id}.${mac(user, id).toString("base64url")}`;
}

/** Sent only to the sign-in endpoint, never readable by scripts. */
export function deviceCookie(value: string, secure: boolean): string {
  return [
    `${DEVICE_COOKIE}=${value}`,
    "Path=/api/auth/login",
    `Max-Age=${MAX_AGE_SECONDS}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export function readDeviceCookie(cookieHeader: string | null): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq >= 0 && part.slice(0, eq).trim() === DEVICE_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}
