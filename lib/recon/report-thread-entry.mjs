// The report thread's file as Node loads it: plain JavaScript, because `next build`
// bundles route code and a Worker needs a file of its own on disk. It registers
// tsx's loader in this thread (an `--import tsx` in the Worker's execArgv is not
// applied to a thread's own modules on Node 20: "Unknown file extension .ts"),
// then runs report-thread.ts from the source tree, @/ paths and all.
import { register } from "tsx/esm/api";

register();
await import("./report-thread.ts");
