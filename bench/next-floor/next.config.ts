import type { NextConfig } from "next";

// Same server settings as Tally's own next.config.ts, so the floor is comparable.
const nextConfig: NextConfig = { poweredByHeader: false, compress: false };

export default nextConfig;
