// What each resolution means for this kind of case, in words: shared by the
// server-rendered case page and the client-side decision form.
export type Resolution = "TIMING" | "ESCALATE" | "CORRECT";

export function resolutionLabel(r: Resolution, kind: "OURS_NOT_THEIRS" | "MISMATCH" | "CONFLICT"): string {
  if (kind === "CONFLICT") return "Take it to the provider — nothing of it is posted until they say which delivery is right";
  if (r === "TIMING") return "Timing — the provider will report it later: re-check on the next run";
  if (r === "ESCALATE") return kind === "OURS_NOT_THEIRS" ? "Confirmed valid — the provider's record is missing: escalate to them" : "Ours is right — the provider's record is wrong: escalate to them";
  return kind === "OURS_NOT_THEIRS" ? "Correct — reverse our posting" : "Correct — adjust our posting to the provider's amount";
}
