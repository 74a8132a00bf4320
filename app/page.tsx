export default function Home() {
  return (
    <main style={{ maxWidth: 720, margin: "4rem auto", padding: "0 1rem" }}>
      <h1>Tally</h1>
      <p>Payment webhooks received safely, posted once, reconciled daily.</p>
      <p>
        Webhooks: <code>POST /api/webhooks/&lt;tenant&gt;/&lt;provider&gt;</code> · <a href="/api/health">health</a> · <a href="/api/metrics">metrics</a>
      </p>
    </main>
  );
}
