"use client";
// A secret or password shown exactly once: it lives only in this component's
// state, so leaving or reloading the page loses it for good.
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div className="shown-once" role="status">
      <p>
        <strong>{label}</strong> — copy it now; it will not be shown again.
      </p>
      <output className="mono secret-value" data-testid="shown-once">
        {value}
      </output>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}
