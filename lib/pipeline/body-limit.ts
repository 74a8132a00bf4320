// Reads a request body up to a byte limit without ever holding more than the
// limit: an oversized body is refused part-way, not buffered and then measured.
export type BodyRead = { ok: true; body: Buffer<ArrayBuffer> } | { ok: false; reason: "too_large" };

export async function readBodyWithLimit(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<BodyRead> {
  if (!stream) return { ok: true, body: Buffer.alloc(0) };
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return { ok: false, reason: "too_large" };
    }
    chunks.push(value);
  }
  return { ok: true, body: Buffer.concat(chunks, total) };
}
