// Passwords are stored as Argon2id hashes (memory-hard), never in the clear.
import { hash, verify } from "@node-rs/argon2";
import { randomBytes } from "node:crypto";

// OWASP's Argon2id minimum: 19 MiB of memory, 2 passes, 1 lane.
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A password people can type: 4 groups of 4 unambiguous characters. */
export function generatePassword(): string {
  const alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789";
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join("")).join("-");
}

export function passwordProblem(password: string): string | null {
  if (password.length < 12) return "Password must be at least 12 characters";
  if (password.length > 256) return "Password must be at most 256 characters";
  return null;
}
