// Fixtures for Adyen, Paystack, Flutterwave and PayPal: payloads shaped like the
// providers' documented examples, signers independent of our verifiers (Adyen's own
// library; node:crypto and zlib for the rest), and endpoints with their settings.
import { execFileSync } from "node:child_process";
import { createHmac, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { crc32 as zlibCrc32 } from "node:zlib";
import { hmacValidator } from "@adyen/api-library";
import { SYSTEM_ACTOR } from "@/lib/admin/audit";
import { prisma } from "@/lib/platform/db";
import { forgetEndpoints } from "@/lib/pipeline/endpoint-cache";
import type { Provider } from "@/lib/generated/prisma/enums";
import { addSecret, generateSecret } from "@/lib/admin/tenants";
import { aStandardPayment, aStripePayment, unique, type TestTenant } from "@/dev/testing/builders";

/** Adds (or rotates in) a secret for the tenant's endpoint, and sets its settings. Returns the secret. */
export async function anEndpoint(
  tenant: TestTenant,
  provider: Provider,
  o: { secret?: string; settings?: Record<string, unknown> } = {},
): Promise<string> {
  const secret =
    o.secret ?? (provider === "paystack" ? `sk_test_${generateSecret(provider)}` : generateSecret(provider));
  const r = await addSecret(tenant.slug, provider, secret, {}, SYSTEM_ACTOR);
  if (!r.ok) throw new Error(r.message);
  if (o.settings) {
    await prisma.providerEndpoint.update({
      where: { id: r.value.endpointId },
      data: { settings: o.settings as object },
    });
    forgetEndpoints(tenant.slug);
  }
  return secret;
}

const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

// ---- Adyen ----

export type AdyenItemOptions = {
  pspReference?: string;
  originalReference?: string;
  eventCode?: string;
  success?: "true" | "false";
  value?: number;
  currency?: string;
  merchantReference?: string;
  eventDate?: string;
  additionalData?: Record<string, unknown>;
};

export const aPspReference = () =>
  unique("")
    .replace(/[^A-Za-z0-9]/g, "")
    .toUpperCase()
    .padEnd(16, "0")
    .slice(-16);

/** A NotificationRequestItem as Adyen documents it (an AUTHORISATION unless told otherwise), unsigned. */
export function anAdyenItem(o: AdyenItemOptions = {}): Record<string, unknown> {
  const eventCode = o.eventCode ?? "AUTHORISATION";
  return {
    additionalData: o.additionalData ?? {
      shopperReference: "shopper_alice",
      "metadata.account": "acct_alice",
      authCode: "033899",
      cardSummary: "1111",
      expiryDate: "03/2030",
    },
    amount: { currency: o.currency ?? "EUR", value: o.value ?? 1130 },
    eventCode,
    eventDate: o.eventDate ?? "2026-12-02T15:04:05+01:00",
    merchantAccountCode: "TallyTestMerchant",
    // The account rides in the signed merchantReference (lib/providers/adyen/parse.ts).
    merchantReference: o.merchantReference ?? `acct_alice/${unique("order-")}`,
    ...(o.originalReference !== undefined && { originalReference: o.originalReference }),
    ...(eventCode === "AUTHORISATION" && {
      operations: ["CANCEL", "CAPTURE", "REFUND"],
      paymentMethod: "visa",
      reason: "033899:1111:03/2030",
    }),
    pspReference: o.pspReference ?? aPspReference(),
    success: o.success ?? "true",
  };
}

/** The item with additionalData.hmacSignature computed by Adyen's own library. */
export function signedByAdyen<T extends Record<string, unknown>>(item: T, hexKey: string): T {
  const additionalData = { ...(item.additionalData as Record<string, unknown> | undefined) };
  delete additionalData.hmacSignature;
  const unsigned = { ...item, additionalData };
  const hmacSignature = new hmacValidator().calculateHmac(unsigned as never, hexKey);
  return { ...item, additionalData: { ...additionalData, hmacSignature } };
}

export function anAdyenBatch(items: Record<string, unknown>[], o: { live?: "true" | "false" } = {}) {
  return { live: o.live ?? "false", notificationItems: items.map((item) => ({ NotificationRequestItem: item })) };
}

// ---- Paystack ----

/** charge.success, shaped like Paystack's documented example. */
export function aPaystackCharge(
  o: {
    reference?: string;
    amount?: number | string;
    currency?: string;
    account?: string | null;
    customerCode?: string;
    domain?: "test" | "live";
    paidAt?: string;
  } = {},
) {
  return {
    event: "charge.success",
    data: {
      id: 302961,
      domain: o.domain ?? "test",
      status: "success",
      reference: o.reference ?? unique("ref_"),
      amount: o.amount ?? 10000,
      message: null,
      gateway_response: "Approved by Financial Institution",
      paid_at: o.paidAt ?? "2026-12-02T14:10:19.000Z",
      created_at: "2026-12-02T14:09:56.000Z",
      channel: "card",
      currency: o.currency ?? "NGN",
      ip_address: "41.242.49.37",
      metadata: o.account === null ? "" : { account: o.account ?? "acct_alice", custom_fields: [] },
      fees: null,
      customer: {
        id: 68324,
        first_name: "Ada",
        last_name: "Obi",
        email: "ada@example.com",
        customer_code: o.customerCode ?? "CUS_qo38as2hpsgk2r0",
        phone: null,
        metadata: null,
        risk_action: "default",
      },
      authorization: {
        authorization_code: "AUTH_f5rnfq9p",
        bin: "539999",
        last4: "8877",
        exp_month: "08",
        exp_year: "2030",
        card_type: "mastercard DEBIT",
        bank: "Guaranty Trust Bank",
        country_code: "NG",
        brand: "mastercard",
        reusable: true,
      },
      plan: {},
    },
  };
}

/** refund.processed for a charge. */
export function aPaystackRefund(o: {
  id?: number | string;
  transactionReference: string;
  amount?: number | string;
  currency?: string;
  domain?: "test" | "live";
}) {
  return {
    event: "refund.processed",
    data: {
      id: o.id ?? 3018284,
      status: "processed",
      transaction_reference: o.transactionReference,
      refund_reference: "132013318360",
      amount: o.amount ?? 10000,
      currency: o.currency ?? "NGN",
      processor: "mpgs_zenith",
      customer: { first_name: null, last_name: null, email: "ada@example.com" },
      integration: 463433,
      domain: o.domain ?? "test",
      refunded_at: "2026-12-03T09:00:00.000Z",
    },
  };
}

export const paystackSignature = (body: string | Buffer, secret: string) =>
  createHmac("sha512", secret).update(body).digest("hex");

// ---- Flutterwave ----

/** charge.completed, shaped like Flutterwave's documented v3 example. */
export function aFlutterwaveCharge(
  o: {
    id?: number | string;
    flwRef?: string;
    txRef?: string;
    amount?: number | string;
    currency?: string;
    status?: string;
    account?: string;
  } = {},
) {
  return {
    event: "charge.completed",
    data: {
      id: o.id ?? 285959875,
      tx_ref: o.txRef ?? unique("Links-"),
      flw_ref: o.flwRef ?? unique("TallyTest/FLW"),
      device_fingerprint: "a42937f4a73ce8bb8b8df14e63a2df31",
      amount: o.amount ?? 100,
      currency: o.currency ?? "NGN",
      charged_amount: o.amount ?? 100,
      app_fee: 1.4,
      merchant_fee: 0,
      processor_response: "Approved by Financial Institution",
      auth_model: "PIN",
      ip: "197.210.64.96",
      narration: "CARD Transaction ",
      status: o.status ?? "successful",
      payment_type: "card",
      created_at: "2026-12-02T14:17:04.000Z",
      account_id: 17321,
      ...(o.account && { meta: { account: o.account } }),
      customer: {
        id: 215604089,
        name: "Yemi Desola",
        phone_number: null,
        email: "user@example.com",
        created_at: "2026-12-02T14:17:04.000Z",
      },
      card: {
        first_6digits: "123456",
        last_4digits: "7889",
        issuer: "VERVE FIRST CITY MONUMENT BANK PLC",
        country: "NG",
        type: "VERVE",
        expiry: "02/30",
      },
    },
    "event.type": "CARD_TRANSACTION",
  };
}

// ---- PayPal ----

const API = "https://api.sandbox.paypal.com";

/** PAYMENT.CAPTURE.COMPLETED, shaped like PayPal's documented example. */
export function aPaypalCapture(
  o: {
    id?: string;
    value?: string;
    currency?: string;
    customId?: string | null;
    invoiceId?: string;
    /** PayPal's fee of the capture (seller_receivable_breakdown.paypal_fee); null leaves it out. */
    fee?: string | null;
  } = {},
) {
  const id = o.id ?? unique("CAP").toUpperCase();
  const fee = o.fee === undefined ? "1.17" : o.fee;
  return {
    id: unique("WH-"),
    event_version: "1.0",
    create_time: "2026-12-02T14:50:07.940Z",
    resource_type: "capture",
    resource_version: "2.0",
    event_type: "PAYMENT.CAPTURE.COMPLETED",
    summary: `Payment completed for ${o.value ?? "30.00"} ${o.currency ?? "USD"}`,
    resource: {
      amount: { currency_code: o.currency ?? "USD", value: o.value ?? "30.00" },
      seller_protection: { status: "ELIGIBLE", dispute_categories: ["ITEM_NOT_RECEIVED", "UNAUTHORIZED_TRANSACTION"] },
      supplementary_data: { related_ids: { order_id: "7F7ORDER2934" } },
      update_time: "2026-12-02T14:49:58Z",
      create_time: "2026-12-02T14:49:58Z",
      final_capture: true,
      seller_receivable_breakdown: {
        gross_amount: { currency_code: o.currency ?? "USD", value: o.value ?? "30.00" },
        ...(fee !== null && { paypal_fee: { currency_code: o.currency ?? "USD", value: fee } }),
      },
      ...(o.customId !== null && { custom_id: o.customId ?? "acct_alice" }),
      ...(o.invoiceId && { invoice_id: o.invoiceId }),
      links: [
        { href: `${API}/v2/payments/captures/${id}`, rel: "self", method: "GET" },
        { href: `${API}/v2/payments/captures/${id}/refund`, rel: "refund", method: "POST" },
        { href: `${API}/v2/checkout/orders/7F7ORDER2934`, rel: "up", method: "GET" },
      ],
      id,
      status: "COMPLETED",
    },
    links: [{ href: `${API}/v1/notifications/webhooks-events/WH-1`, rel: "self", method: "GET" }],
  };
}

/** PAYMENT.CAPTURE.REFUNDED: the resource is the refund, its `up` link the capture. */
export function aPaypalRefund(o: { id?: string; captureId: string; value?: string; currency?: string }) {
  const id = o.id ?? unique("REF").toUpperCase();
  return {
    id: unique("WH-"),
    event_version: "1.0",
    create_time: "2026-12-03T10:00:01.000Z",
    resource_type: "refund",
    resource_version: "2.0",
    event_type: "PAYMENT.CAPTURE.REFUNDED",
    summary: "A $ 1.00 USD capture payment was refunded",
    resource: {
      seller_payable_breakdown: {
        gross_amount: { currency_code: o.currency ?? "USD", value: o.value ?? "1.00" },
        total_refunded_amount: { currency_code: o.currency ?? "USD", value: o.value ?? "1.00" },
      },
      amount: { currency_code: o.currency ?? "USD", value: o.value ?? "1.00" },
      update_time: "2026-12-03T10:00:00Z",
      create_time: "2026-12-03T10:00:00Z",
      links: [
        { href: `${API}/v2/payments/refunds/${id}`, rel: "self", method: "GET" },
        { href: `${API}/v2/payments/captures/${o.captureId}`, rel: "up", method: "GET" },
      ],
      id,
      status: "COMPLETED",
    },
    links: [{ href: `${API}/v1/notifications/webhooks-events/WH-2`, rel: "self", method: "GET" }],
  };
}

export type PaypalSigner = { certificatePem: string; privateKey: KeyObject; certUrl: string };

/** A fresh self-signed RSA certificate made by openssl, standing in for PayPal's. */
export function aPaypalSigner(o: { certUrl?: string; days?: number } = {}): PaypalSigner {
  const dir = mkdtempSync(path.join(tmpdir(), "tally-paypal-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        String(o.days ?? 2),
        "-subj",
        "/CN=messageverificationcerts.sandbox.paypal.com",
      ],
      { stdio: "ignore" },
    );
    return {
      certificatePem: readFileSync(cert, "utf8"),
      privateKey: createPrivateKey(readFileSync(key)),
      certUrl: o.certUrl ?? `${API}/v1/notifications/certs/CERT-360caa42-fca2a594-${unique("").slice(-8)}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A root CA, an intermediate and a leaf made by openssl, like the chain PayPal serves
 * (leaf, then intermediate; the root is the trust anchor, never served). The leaf is
 * issued to `host` in its SAN and subject; `leafSigner` signs with the leaf's key.
 */
export function aCertificateChain(o: { host?: string; certUrl?: string } = {}): {
  rootPem: string;
  intermediatePem: string;
  leafPem: string;
  servedPem: string;
  leafSigner: PaypalSigner;
} {
  const host = o.host ?? "messageverificationcerts.sandbox.paypal.com";
  const dir = mkdtempSync(path.join(tmpdir(), "tally-chain-"));
  const f = (name: string) => path.join(dir, name);
  const run = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore", cwd: dir });
  try {
    writeFileSync(f("ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
    writeFileSync(
      f("leaf.ext"),
      `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nsubjectAltName=DNS:${host}\n`,
    );
    run(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "root.key",
      "-out",
      "root.pem",
      "-days",
      "3",
      "-subj",
      "/CN=Tally Test Root CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    );
    run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "int.key",
      "-out",
      "int.csr",
      "-subj",
      "/CN=Tally Test Intermediate CA",
    );
    run(
      "x509",
      "-req",
      "-in",
      "int.csr",
      "-CA",
      "root.pem",
      "-CAkey",
      "root.key",
      "-CAcreateserial",
      "-out",
      "int.pem",
      "-days",
      "3",
      "-extfile",
      "ca.ext",
    );
    run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "leaf.key",
      "-out",
      "leaf.csr",
      "-subj",
      `/O=PayPal, Inc./CN=${host}`,
    );
    run(
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "int.pem",
      "-CAkey",
      "int.key",
      "-CAcreateserial",
      "-out",
      "leaf.pem",
      "-days",
      "2",
      "-extfile",
      "leaf.ext",
    );
    const [rootPem, intermediatePem, leafPem] = ["root.pem", "int.pem", "leaf.pem"].map((n) =>
      readFileSync(f(n), "utf8"),
    ) as [string, string, string];
    return {
      rootPem,
      intermediatePem,
      leafPem,
      servedPem: leafPem + intermediatePem,
      leafSigner: {
        certificatePem: leafPem + intermediatePem,
        privateKey: createPrivateKey(readFileSync(f("leaf.key"))),
        certUrl: o.certUrl ?? `${API}/v1/notifications/certs/CERT-chain-${unique("").slice(-8)}`,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PayPal's five headers, signed as PayPal documents: id|time|webhookId|crc32(body), RSA-SHA256, base64. */
export function paypalHeaders(
  body: string | Buffer,
  signer: PaypalSigner,
  o: { webhookId: string; transmissionId?: string; time?: Date },
): Record<string, string> {
  const transmissionId = o.transmissionId ?? unique("tx-");
  const time = isoSeconds(o.time ?? new Date());
  const message = `${transmissionId}|${time}|${o.webhookId}|${zlibCrc32(typeof body === "string" ? Buffer.from(body, "utf8") : body)}`;
  return {
    "paypal-transmission-id": transmissionId,
    "paypal-transmission-time": time,
    "paypal-transmission-sig": sign("sha256", Buffer.from(message), signer.privateKey).toString("base64"),
    "paypal-cert-url": signer.certUrl,
    "paypal-auth-algo": "SHA256withRSA",
  };
}

// ---- Money that is not money (every provider) ----

/**
 * A payment of each provider with its amount and currency replaced by whatever
 * an attacker or a broken integration sends (-500, "-500", 2^63, 1e21, "xyz",
 * "usd "), placed exactly where that provider carries them. Unsigned: for parsers,
 * and for deliveries signed by the caller.
 */
export function aPaymentWithMoney(
  provider: Provider,
  money: { amount?: unknown; currency?: unknown },
): Record<string, unknown> {
  const set = (target: Record<string, unknown>, amountKey: string, currencyKey: string) => {
    if ("amount" in money) target[amountKey] = money.amount;
    if ("currency" in money) target[currencyKey] = money.currency;
  };
  switch (provider) {
    case "stripe": {
      const e = aStripePayment();
      set(e.data.object as Record<string, unknown>, "amount_received", "currency");
      return e;
    }
    case "standard": {
      const e = aStandardPayment();
      set(e.data as Record<string, unknown>, "amount", "currency");
      return e;
    }
    case "adyen": {
      const item = anAdyenItem();
      set(item.amount as Record<string, unknown>, "value", "currency");
      return anAdyenBatch([item]);
    }
    case "paystack": {
      const e = aPaystackCharge();
      set(e.data as Record<string, unknown>, "amount", "currency");
      return e;
    }
    case "flutterwave": {
      const e = aFlutterwaveCharge();
      set(e.data as Record<string, unknown>, "amount", "currency");
      return e;
    }
    case "paypal": {
      // Without its fee: these cases are about the capture's amount, in any currency.
      const e = aPaypalCapture({ fee: null });
      set(e.resource.amount as Record<string, unknown>, "value", "currency_code");
      return e;
    }
  }
}

/** Where each provider's amount sits, as a parse error names it. */
export const AMOUNT_FIELD: Record<Provider, string> = {
  stripe: "amount_received",
  standard: "amount",
  adyen: "amount.value",
  paystack: "amount",
  flutterwave: "amount",
  paypal: "amount.value",
};
export const CURRENCY_FIELD: Record<Provider, string> = {
  stripe: "currency",
  standard: "currency",
  adyen: "amount.currency",
  paystack: "currency",
  flutterwave: "currency",
  paypal: "amount.currency_code",
};
