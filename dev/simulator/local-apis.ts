// The provider endpoints a replay needs beside Tally, on one plain-HTTP server on
// this machine: Flutterwave's verify API and PayPal's token and payments API
// (answered from the day's truth), and the PayPal signing certificate. Served under a configured
// TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES prefix when there is one, so the product,
// started with the same variable, trusts the certificate.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveFlutterwaveVerify, type FlutterwaveAccounts } from "@/dev/simulator/flutterwave-api";
import { type PaypalAccounts, servePaypalApi } from "@/dev/simulator/paypal-api";
import {
  certificateUrl,
  servePaypalCertificate,
  simulatorPaypalCertificate,
  type PaypalSigning,
} from "@/dev/simulator/paypal-certificate";

export type LocalProviderApis = { url: string; paypal: PaypalSigning; close(): Promise<void> };

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The first configured certificate prefix this machine can serve: plain http on a loopback host. */
export function localCertificatePrefix(prefixes: readonly string[]): URL | null {
  for (const p of prefixes) {
    const url = new URL(p);
    if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return url;
  }
  return null;
}

export async function startLocalProviderApis(o: {
  flutterwave: FlutterwaveAccounts;
  paypal: PaypalAccounts;
  certificatePrefix?: URL | null;
}): Promise<LocalProviderApis> {
  let certUrl = "";
  const server = http.createServer((req, res) => {
    if (servePaypalCertificate(req, res, certUrl)) return;
    if (serveFlutterwaveVerify(req, res, o.flutterwave)) return;
    if (servePaypalApi(req, res, o.paypal)) return;
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify({ status: "error", message: `No route for ${req.method} ${req.url}` }));
  });
  const prefix = o.certificatePrefix ?? null;
  const host = prefix ? prefix.hostname.replace(/^\[|\]$/g, "") : "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(prefix ? Number(prefix.port || 80) : 0, host, () => resolve());
  });
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  certUrl = certificateUrl(prefix ? prefix.href : `${url}/v1/notifications/certs/`);
  return {
    url,
    paypal: { privateKey: simulatorPaypalCertificate().privateKey, certUrl },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
