"use client";
// A state change a person must give a reason for (audited): a modal dialog that
// says what will happen, asks for the reason, sends the request with the session's
// CSRF token, shows the server's refusal in place, and closes on success.
import { useRef, type FormEvent, type ReactNode } from "react";
import { useApiMutation } from "@/components/use-api-mutation";

export function ReasonDialog<Result>({
  id,
  title,
  children,
  placeholder,
  submit,
  pending,
  request,
  refresh,
  onClose,
  onDone,
}: {
  /** Unique on the page: names the dialog by its heading. */
  id: string;
  title: ReactNode;
  /** What will happen, before the reason. */
  children: ReactNode;
  placeholder: string;
  submit: string;
  pending: string;
  request: (reason: string) => { path: string; method?: string; body: Record<string, unknown> };
  refresh: unknown[][];
  onClose: () => void;
  onDone: (result: Result) => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const mutation = useApiMutation<{ reason: string }, Result>(({ reason }) => request(reason), refresh);
  function send(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const reason = String(new FormData(e.currentTarget).get("reason") ?? "");
    mutation.mutate(
      { reason },
      {
        onSuccess: (r) => {
          ref.current?.close();
          onDone(r);
        },
      },
    );
  }
  return (
    <dialog
      ref={(el) => {
        ref.current = el;
        if (el && !el.open) el.showModal();
      }}
      onClose={onClose}
      aria-labelledby={`${id}-h`}
    >
      <form onSubmit={send} className="stack">
        <h2 id={`${id}-h`}>{title}</h2>
        <p className="small">{children} Your reason goes into the audit log.</p>
        <label>
          Reason
          <textarea name="reason" required minLength={3} maxLength={500} autoFocus placeholder={placeholder} />
        </label>
        {mutation.error && (
          <p role="alert" className="error">
            {mutation.error.message}
          </p>
        )}
        <div className="button-row">
          <button type="submit" disabled={mutation.isPending}>
            {mutation.isPending ? pending : submit}
          </button>
          <button type="button" className="secondary" onClick={() => ref.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
