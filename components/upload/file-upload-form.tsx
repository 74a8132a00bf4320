"use client";
// A file sent as the raw body of a POST to an API route, its upload progress shown, then
// the server's summary or its refusal as the server words it: the bank statement import
// (components/bank/upload-form.tsx) and the settlement report upload
// (components/recon/upload-form.tsx). XMLHttpRequest rather than fetch because only it
// reports upload progress. The server streams the body to disk under a size cap; the
// cap is checked here first so a file that is too large is not sent at all.
import { type FormEvent, type ReactNode, useRef, useState } from "react";
import { useCsrfToken } from "@/components/providers";

type State<S> =
  | { phase: "idle" }
  | { phase: "uploading"; sent: number; total: number }
  | { phase: "processing" }
  | { phase: "done"; summary: S }
  | { phase: "failed"; message: string };

export const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

function send(
  url: string,
  file: File,
  contentType: string,
  csrfToken: string,
  onProgress: (sent: number, total: number) => void,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("x-csrf-token", csrfToken);
    xhr.setRequestHeader("content-type", contentType);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: reported by status below
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => reject(new Error("The upload failed: the connection was lost. Try again."));
    xhr.send(file);
  });
}

/** The file input the form sends: its name is the one FileUploadForm reads. */
export function FileField({ label, accept }: { label: string; accept: string }) {
  return (
    <label>
      {label}
      <input type="file" name="file" accept={accept} required />
    </label>
  );
}

export type FileUploadFormProps<S> = {
  /** The heading's id, which names the form (aria-labelledby). */
  headingId: string;
  heading: string;
  intro: ReactNode;
  /** The form's fields, a FileField among them. */
  children: ReactNode;
  maxBytes: number;
  /** Said when no file (or an empty one) is chosen. */
  noFile: string;
  /** Said after "<name> is <size>; the limit is <max>." when the file is too large. */
  tooLargeHint?: string;
  /** The route the file is posted to, from the form's other fields. */
  url: (fields: FormData, file: File) => string;
  contentType: string;
  submitLabel: string;
  /** Shown once the file is sent, while the server works on it. */
  processing: string;
  errorTestId: string;
  doneTestId?: string;
  /** The server's 201 summary, in words. */
  done: (summary: S) => ReactNode;
  /** After a 201 and the form's reset. */
  onDone?: () => void;
  /** After every answer or lost connection, accepted or not. */
  onSettled?: () => Promise<unknown>;
};

export function FileUploadForm<S>(p: FileUploadFormProps<S>) {
  const csrfToken = useCsrfToken();
  const [state, setState] = useState<State<S>>({ phase: "idle" });
  const form = useRef<HTMLFormElement>(null);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const file = f.get("file");
    if (!(file instanceof File) || file.size === 0) return setState({ phase: "failed", message: p.noFile });
    if (file.size > p.maxBytes)
      return setState({
        phase: "failed",
        message: `${file.name} is ${mib(file.size)}; the limit is ${mib(p.maxBytes)}.${p.tooLargeHint ? ` ${p.tooLargeHint}` : ""}`,
      });
    setState({ phase: "uploading", sent: 0, total: file.size });
    try {
      const r = await send(p.url(f, file), file, p.contentType, csrfToken, (sent, total) =>
        setState(sent >= total ? { phase: "processing" } : { phase: "uploading", sent, total }),
      );
      if (r.status === 201) {
        setState({ phase: "done", summary: r.body as S });
        form.current?.reset();
        p.onDone?.();
      } else
        setState({
          phase: "failed",
          message:
            (r.body as { error?: { message?: string } } | null)?.error?.message ?? `The server answered ${r.status}`,
        });
    } catch (error) {
      setState({ phase: "failed", message: error instanceof Error ? error.message : String(error) });
    } finally {
      await p.onSettled?.();
    }
  }

  const busy = state.phase === "uploading" || state.phase === "processing";
  return (
    <form ref={form} onSubmit={submit} className="panel form-grid" aria-labelledby={p.headingId}>
      <h2 id={p.headingId}>{p.heading}</h2>
      <p className="small muted">{p.intro}</p>
      {p.children}
      <div className="button-row">
        <button type="submit" disabled={busy}>
          {busy ? "Working…" : p.submitLabel}
        </button>
      </div>
      {state.phase === "uploading" && (
        <div role="status">
          <label>
            Uploading: {mib(state.sent)} of {mib(state.total)}
            <progress value={state.sent} max={state.total} aria-label="Upload progress" />
          </label>
        </div>
      )}
      {state.phase === "processing" && (
        <p role="status" className="muted">
          {p.processing}
        </p>
      )}
      {state.phase === "failed" && (
        <p role="alert" className="error" data-testid={p.errorTestId}>
          {state.message}
        </p>
      )}
      {state.phase === "done" && (
        <p role="status" className="notice" data-testid={p.doneTestId}>
          {p.done(state.summary)}
        </p>
      )}
    </form>
  );
}
