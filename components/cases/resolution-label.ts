// The case labels live in one module shared by server and client (lib/cases/labels.ts).
export { reasonCodeLabel, resolutionLabel, type Resolution } from "@/lib/cases/labels";
