"use client";
// Upload a settlement report (Stripe itemized balance report, Adyen Settlement
// Details, or Tally's format). The upload itself is
// components/upload/file-upload-form.tsx; the server reconciles the file. A
// malformed file comes back with the row and column at fault and nothing imported.
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { FileField, FileUploadForm, mib } from "@/components/upload/file-upload-form";

type Summary = {
  runId: string;
  compared: number;
  matched: number;
  theirsNotOurs: number;
  oursNotTheirs: number;
  mismatched: number;
  casesOpened: number;
  linesOutsideWindow: number;
  /** Fees and other movements only the settlement reports: held until a second person approves them. */
  heldForApproval: { fees: number; others: number } | null;
  bytes: number;
};

export function UploadForm({ tenant, providers, maxBytes }: { tenant: string; providers: string[]; maxBytes: number }) {
  const client = useQueryClient();
  return (
    <FileUploadForm<Summary>
      headingId="upload-h"
      heading="Upload a settlement report"
      intro={
        <>
          Stripe&apos;s itemized balance report, Adyen&apos;s Settlement Details Report, or Tally&apos;s{" "}
          <code>reference,kind,amount,currency,occurred_at</code>. The run covers the span of the file&apos;s lines. Up
          to {mib(maxBytes)}.
        </>
      }
      maxBytes={maxBytes}
      noFile="Choose a settlement report file (CSV) first."
      tooLargeHint="Split it by date and upload the parts."
      url={(f, file) => {
        const query = new URLSearchParams({
          provider: String(f.get("provider")),
          name: file.name,
          ...(f.get("format") ? { format: String(f.get("format")) } : {}),
        });
        return `/api/v1/tenants/${tenant}/reconciliation/uploads?${query}`;
      }}
      contentType="text/csv"
      submitLabel="Upload and reconcile"
      processing="Uploaded; reconciling the report against the ledger…"
      errorTestId="upload-error"
      onSettled={() =>
        Promise.all([
          client.invalidateQueries({ queryKey: ["runs", tenant] }),
          client.invalidateQueries({ queryKey: ["overview", tenant] }),
        ])
      }
      done={(s) => (
        <>
          <Link href={`/t/${tenant}/reconciliation/${s.runId}`}>Run #{s.runId}</Link>: {s.compared} compared,{" "}
          {s.matched} matched, {s.theirsNotOurs} theirs-not-ours, {s.oursNotTheirs} ours-not-theirs, {s.mismatched}{" "}
          mismatched; {s.casesOpened} cases opened.
          {s.heldForApproval &&
            ` ${s.heldForApproval.fees + s.heldForApproval.others} settlement movements await a second person's approval.`}
        </>
      )}
    >
      <label>
        Provider
        <select name="provider" defaultValue={providers[0]}>
          {providers.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <label>
        Format
        <select name="format" defaultValue="">
          <option value="">Detect from the header</option>
          <option value="stripe">Stripe itemized balance report</option>
          <option value="adyen">Adyen Settlement Details</option>
          <option value="tally">Tally (reference,kind,amount,currency,occurred_at)</option>
        </select>
      </label>
      <FileField label="Report file" accept=".csv,text/csv,text/plain" />
    </FileUploadForm>
  );
}
