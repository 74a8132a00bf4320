// The simulators' stand-in for PayPal's signing certificate: an RSA key pair made
// once per process with node:crypto, self-signed into an X.509 certificate by
// openssl (node:crypto cannot issue one), served over plain HTTP by whoever runs
// the simulation. Tally fetches it only if TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES
// names where it is served (lib/platform/config.ts: simulators and tests only).
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, X509Certificate, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";

export type SimPaypalCertificate = {
  privateKey: KeyObject;
  certificatePem: string /** The certificate's own name in URLs: a new key pair is a new URL, so no cache keeps the old one. */;
  name: string;
};

/** What signing a PayPal delivery needs: the key, and the URL its certificate is served at. */
export type PaypalSigning = { privateKey: KeyObject; certUrl: string };

let made: SimPaypalCertificate | null = null;

export function simulatorPaypalCertificate(): SimPaypalCertificate {
  if (made) return made;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const dir = mkdtempSync(path.join(tmpdir(), "tally-sim-paypal-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    writeFileSync(key, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-new",
        "-key",
        key,
        "-out",
        cert,
        "-days",
        "7",
        "-subj",
        "/CN=Tally PayPal simulator (not PayPal)",
      ],
      { stdio: "ignore" },
    );
    const certificatePem = readFileSync(cert, "utf8");
    made = {
      privateKey,
      certificatePem,
      name: `CERT-sim-${new X509Certificate(certificatePem).fingerprint256.replace(/:/g, "").slice(0, 16).toLowerCase()}`,
    };
    return made;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where the certificate is served below a base URL (a server's URL, or a configured prefix). */
export function certificateUrl(base: string): string {
  return new URL(simulatorPaypalCertificate().name, base.endsWith("/") ? base : `${base}/`).href;
}

/** Answers GET <path of certUrl> with the PEM; false when the request is for something else. */
export function servePaypalCertificate(req: IncomingMessage, res: ServerResponse, certUrl: string): boolean {
  if (req.method !== "GET" || new URL(req.url ?? "/", "http://sim").pathname !== new URL(certUrl).pathname)
    return false;
  res.writeHead(200, { "content-type": "application/x-pem-file" }).end(simulatorPaypalCertificate().certificatePem);
  return true;
}
