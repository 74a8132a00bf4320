// A raw event's or claim's status as a coloured word (the word carries the meaning; colour only helps).
const TONE: Record<string, string> = {
  DONE: "good",
  DUPLICATE: "muted",
  IGNORED: "muted",
  FAILED: "bad",
  RECEIVED: "warn",
  CLAIMED: "warn",
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${TONE[status] ?? "muted"}`}>{status.toLowerCase()}</span>;
}
