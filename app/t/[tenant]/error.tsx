"use client";
// A page failed to load (usually the database): say so and offer a retry.
export default function PageError({ reset }: { error: Error; reset: () => void }) {
  return (
    <section className="empty" role="alert">
      <h2>This page could not be loaded</h2>
      <p>
        The server could not answer, often because the database is unavailable. Try again in a moment; if it persists,
        check <a href="/api/health">/api/health</a>.
      </p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </section>
  );
}
