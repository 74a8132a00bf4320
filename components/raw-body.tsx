// A raw body exactly as received: the text when the bytes are valid UTF-8,
// otherwise a hex dump (offset, 16 bytes, printable ASCII), never re-encoded.

function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const chunk = bytes.subarray(i, i + 16);
    const hex = [...chunk].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...chunk].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${i.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

/** `redacted`: signature values inside the body were replaced for display; `receivedBytes` is then the stored length. */
export function RawBody({
  bytes,
  text,
  receivedBytes,
  redacted = false,
}: {
  bytes: Uint8Array;
  text: string | null;
  receivedBytes?: number;
  redacted?: boolean;
}) {
  return (
    <figure className="raw-body">
      <figcaption>
        {receivedBytes ?? bytes.length} bytes,{" "}
        {text === null
          ? "not valid UTF-8: shown as hex"
          : redacted
            ? "UTF-8 text as received, signature values redacted"
            : "UTF-8 text, exactly as received"}
      </figcaption>
      <pre tabIndex={0} aria-label="Raw body" data-testid="raw-body">
        {text ?? hexDump(bytes)}
      </pre>
    </figure>
  );
}
