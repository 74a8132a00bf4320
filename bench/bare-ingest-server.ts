// The baseline for the acknowledgement benchmark: node:http and pg, no framework,
// no verification, doing the same single INSERT per request. What Tally's route
// costs beyond this is the price of Next.js, verification and Prisma.
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const tenantId = process.env.BENCH_TENANT_ID!;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    pool
      .query(
        "INSERT INTO raw_events (tenant_id, provider, raw_body, headers) VALUES ($1, 'stripe', $2, $3) RETURNING id",
        [
          tenantId,
          body,
          JSON.stringify({
            "stripe-signature": req.headers["stripe-signature"] ?? "",
            "content-type": req.headers["content-type"] ?? "",
          }),
        ],
      )
      .then(
        () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end('{"received":true}');
        },
        () => {
          res.writeHead(503);
          res.end();
        },
      );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
