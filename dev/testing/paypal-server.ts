// A real local server answering as PayPal for tests: its certificate at a URL the
// product is told to trust (TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES, the simulators'
// escape hatch) and its REST API (dev/simulator/paypal-api.ts) over what the test adds.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { vi } from "vitest";
import { resetConfigForTests } from "@/lib/platform/config";
import { PaypalAccounts, servePaypalApi } from "@/dev/simulator/paypal-api";
import { aPaypalSigner, type PaypalSigner } from "@/dev/testing/provider-builders";

export type PaypalTestServer = {
  /** The API's base URL, for the endpoint's apiBaseUrl setting. */
  base: string;
  signer: PaypalSigner;
  paypal: PaypalAccounts;
  close(): Promise<void>;
};

/** Starts the server and trusts its certificate; close() stops it and forgets the trust. */
export async function startPaypalTestServer(name: string): Promise<PaypalTestServer> {
  const paypal = new PaypalAccounts();
  let signer: PaypalSigner | undefined;
  const server: Server = createServer((req, res) => {
    if (signer && req.url === new URL(signer.certUrl).pathname)
      return void res.writeHead(200).end(signer.certificatePem);
    if (servePaypalApi(req, res, paypal)) return;
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  vi.stubEnv("TALLY_PAYPAL_EXTRA_CERT_URL_PREFIXES", `${base}/v1/notifications/certs/`);
  resetConfigForTests();
  signer = aPaypalSigner({ certUrl: `${base}/v1/notifications/certs/CERT-${name}` });
  return {
    base,
    signer,
    paypal,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      vi.unstubAllEnvs();
      resetConfigForTests();
    },
  };
}
