import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: "Tally",
  description: "Payment webhooks received safely, posted once, reconciled daily",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request: the CSP nonce (proxy.ts) is per request,
  // and a page prerendered at build time would carry scripts without it.
  await connection();
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
