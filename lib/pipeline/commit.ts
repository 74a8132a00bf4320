// Step 4 of the protocol: the effect and its record commit together. In ONE
// transaction: the claim turns DONE (only while our fencing token is current),
// the balanced posting and balance changes are written, the raw event is marked
// done, and a receipt is queued in the outbox. No network call happens inside.
// A pick-up's claims share that transaction (commitBatch): per event, the hot
// clearing balance row was locked by every commit until its WAL flush, so commits
// of one tenant and provider ran one at a time (pgbench here, 16 clients: 410 tx/s
// with one shared row, 8,100 events/s at 25 a tx).
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { endSpan, spanIn, traceparentOf, tracer, tracingOn } from "@/lib/platform/tracing";
import { openSettings } from "@/lib/platform/secrets-at-rest";
import { setTimeout as sleep } from "node:timers/promises";
import { canonical, parseRaw, type OwnedClaim } from "@/lib/pipeline/claim";
import {
  failClaim,
  holdOverWithdrawal,
  type OverWithdrawalKind,
  paymentLockKey,
  releaseClaimToWait,
  releaseClaimToWaitForProvider,
  releaseWithBackoff,
} from "@/lib/pipeline/claim-state";
import { config } from "@/lib/platform/config";
import { pauseIfFaultAt } from "@/lib/pipeline/fault";
import { isDatabaseUnavailable, Prisma, prisma, type Tx } from "@/lib/platform/db";
import { assertBalanced, BALANCE_SLOTS, type Leg, clearingAccountCode, ensureAccounts } from "@/lib/ledger/postings";
import { AWAITED_KINDS, AWAITS, counterAccount, movementLegs } from "@/lib/ledger/movements";
import type { AccountKind, Provider } from "@/lib/generated/prisma/enums";
import { adapterFor } from "@/lib/providers";
import type { Movement } from "@/lib/providers/types";
import { CLAIMS_CHANNEL, OUTBOX_CHANNEL, wake } from "@/lib/pipeline/wake";

export type CommitOutcome =
  | { kind: "posted"; postingId: bigint; outboxId: bigint }
  /** The claim was released and taken by someone else meanwhile: our token is stale, nothing was written. */
  | { kind: "fenced" }
  /** Not possible yet (a refund whose payment is not posted): released for a later retry. */
  | { kind: "deferred"; reason: string; failed: boolean }
  /** A refund past its payment's amount: held for accountants, never posted by the worker. */
  | { kind: "held"; reason: string };

/** Rolls the transaction back and says why; not an error, a decision. */
class Abort extends Error {
  constructor(
    readonly outcome:
      | { kind: "fenced" }
      | { kind: "defer"; reason: string; waitingFor?: string }
      | {
          kind: "hold";
          reason: string;
          conflict: OverWithdrawalKind;
          evidence: { claimed: Record<string, unknown>; delivered: Record<string, unknown>; deliveredKey: string };
        },
  ) {
    super(outcome.kind);
  }
}

async function movementOf(claim: OwnedClaim): Promise<Movement | string> {
  if (claim.movement) return claim.movement;
  const raw = await prisma.rawEvent.findUnique({
    where: { id: claim.rawEventId },
    select: { rawBody: true, provider: true, source: true },
  });
  if (!raw) return `raw event ${claim.rawEventId} not found`;
  if (!raw.rawBody) return `raw event ${claim.rawEventId} has no body: removed after the tenant's retention`;
  const parsed = parseRaw(raw.provider, raw.rawBody, raw.source);
  if (parsed.kind !== "money")
    return `raw event ${claim.rawEventId} no longer parses to money: ${parsed.kind === "failed" ? parsed.error : parsed.reason}`;
  return (
    parsed.movements.find((m) => m.reference === claim.reference) ??
    `raw event ${claim.rawEventId} no longer carries ${claim.reference}`
  );
}

/**
 * The account a refund takes money from when its payload does not name one (the
 * refunded payment's customer), or a failed payout returns from (the payout's bank):
 * the counter account of the posting it waits for; null while that is not posted.
 */
async function accountOfAwaited(
  tx: Tx,
  claim: OwnedClaim,
  awaitedKind: "PAYMENT" | "PAYOUT",
  reference: string,
): Promise<{ code: string; kind: AccountKind } | null> {
  const rows = await tx.$queryRaw<{ code: string; kind: AccountKind }[]>(Prisma.sql`
    SELECT a.code, a.kind FROM postings p
    JOIN ledger_entries e ON e.posting_id = p.id
    JOIN accounts a ON a.id = e.account_id AND a.kind <> 'PROVIDER_CLEARING'
    WHERE p.tenant_id = ${claim.tenantId}::uuid AND p.provider = ${claim.provider}::"Provider"
      AND p.provider_reference = ${reference} AND p.kind = ${awaitedKind}::"PostingKind"
    LIMIT 1`);
  return rows[0] ?? null;
}

/**
 * Providers whose webhooks cannot be trusted alone (Flutterwave) are asked
 * through their API first: after the claim, so two deliveries never both ask,
 * and before the transaction, so no network call happens inside it.
 * Returns the movement to post, or an outcome when it must not be posted (now).
 */
async function confirmWithProvider(claim: OwnedClaim, movement: Movement): Promise<{ post: Movement } | CommitOutcome> {
  const adapter = adapterFor(claim.provider);
  if (!adapter?.confirm) return { post: movement };
  const endpoint = await prisma.providerEndpoint.findUnique({
    where: { tenantId_provider: { tenantId: claim.tenantId, provider: claim.provider } },
    select: { settings: true },
  });
  let answer;
  try {
    answer = await adapter.confirm(movement, openSettings((endpoint?.settings ?? {}) as Record<string, unknown>));
  } catch (error) {
    // An outage, not an answer: wait for the provider without using up attempts.
    const reason = `waiting for provider: ${claim.provider} could not be asked to confirm ${movement.reference}: ${error instanceof Error ? error.message : String(error)}`;
    return (await releaseClaimToWaitForProvider(claim, reason))
      ? { kind: "deferred", reason, failed: false }
      : { kind: "fenced" };
  }
  // What the provider's API says is what is posted; the webhook's copy was compared against it.
  if (answer.ok) return { post: answer.movement ?? movement };
  const reason = `${claim.provider} did not confirm ${movement.reference} (${answer.reason}): ${answer.message}`;
  return (await failClaim(claim, reason)) ? { kind: "deferred", reason, failed: true } : { kind: "fenced" };
}

/**
 * Throws a hold when this refund or dispute would take what the payment's refunds and
 * disputes withdrew (less what disputes gave back) past the payment's amount (in its
 * currency): one payment is never taken back twice, as when a provider reports a lost
 * dispute's money both as a refund and as the dispute's settlement (PayPal can:
 * lib/providers/paypal/parse.ts). Runs under the payment's advisory lock, in the
 * commit's transaction: a concurrent refund or dispute of the same payment waits for
 * this commit and then counts it. A payment not posted yet cannot be checked (its
 * amount is unknown); refunds naming no account wait for it anyway.
 */
async function refuseOverWithdrawal(
  tx: Tx,
  claim: OwnedClaim,
  movement: Movement,
  paymentReference: string,
): Promise<void> {
  // The payment's lock is held: the batch took it before its first member (writeBatch).
  const claims = await tx.$queryRaw<
    { raw_event_id: bigint; reference: string; kind: string; amount: bigint; currency: string; status: string }[]
  >(Prisma.sql`
    SELECT raw_event_id, provider_reference AS reference, movement_kind::text AS kind, amount, trim(currency) AS currency, status::text
    FROM processed_events
    WHERE tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND amount IS NOT NULL
      AND ((provider_reference = ${paymentReference} AND movement_kind = 'PAYMENT' AND status = 'DONE')
        OR (payment_reference = ${paymentReference} AND movement_kind IN ('REFUND', 'DISPUTE', 'DISPUTE_REVERSAL') AND status IN ('DONE', 'HELD')))
    ORDER BY id`);
  const payment = claims.find((c) => c.kind === "PAYMENT");
  if (!payment || payment.currency !== movement.currency) return;
  const refunded = claims
    .filter((c) => c.kind !== "PAYMENT" && c.status === "DONE" && c.currency === movement.currency)
    .reduce((sum, c) => sum + (c.kind === "DISPUTE_REVERSAL" ? -c.amount : c.amount), 0n);
  if (refunded + movement.amount <= payment.amount) return;
  const side = (c: (typeof claims)[number]) => ({
    reference: c.reference,
    kind: c.kind,
    amount: c.amount.toString(),
    currency: c.currency,
    status: c.status,
    rawEventId: c.raw_event_id.toString(),
  });
  const refund = movement.kind === "REFUND";
  const withdrawals = claims.filter((c) => c.kind !== "PAYMENT").map(side);
  const reason = `${refund ? "refund" : "dispute"} ${movement.reference} of ${movement.amount} ${movement.currency} would bring ${paymentReference}'s refunds and disputes to ${refunded + movement.amount}, past the payment's ${payment.amount}: held for accountants, not posted`;
  throw new Abort({
    kind: "hold",
    reason,
    conflict: refund ? "OVER_REFUND" : "OVER_WITHDRAWAL",
    evidence: {
      claimed: {
        payment: side(payment),
        // Refunds, disputes and reinstatements, each with its kind; `refunds` is the same list under the
        // name OVER_REFUND's evidence had before disputes were told apart.
        withdrawals,
        ...(refund ? { refunds: withdrawals } : {}),
        refundedSoFar: refunded.toString(),
        rawEventIds: claims.map((c) => c.raw_event_id.toString()),
      },
      delivered: {
        kind: movement.kind,
        reference: movement.reference,
        account: movement.account,
        amount: movement.amount.toString(),
        currency: movement.currency,
        paymentReference,
      },
      deliveredKey: canonical({
        kind: movement.kind,
        account: movement.account,
        amount: movement.amount,
        currency: movement.currency,
      }),
    },
  });
}

/** A claim ready to write: its movement parsed (and confirmed with the provider where that is needed). */
/** receiptTraceParent: the context its receipt's delivery continues (its event.commit span), when tracing. */
type Member = { claim: OwnedClaim; movement: Movement; receiptTraceParent?: string | null };

/** What a member's write decided; applied once the batch's transaction has committed. */
type Decided =
  | { kind: "posted"; postingId: bigint; outboxId: bigint; woken: number }
  | { kind: "abort"; abort: Abort["outcome"] }
  | { kind: "error"; error: unknown };

/** A batch member's outcome; `error` is a bug or a refused write the caller gives back with a back-off. */
export type BatchOutcome = CommitOutcome | { kind: "error"; error: unknown };

/** Balance changes summed per account and currency over a whole batch. */
export type Net = Map<string, { accountId: bigint; currency: string; amount: bigint }>;

/**
 * Everything before the transaction: the movement (from the pick-up, or parsed
 * again for a released claim) and the provider's confirmation where one is asked
 * for. Returns the member to write, or the claim's outcome when it must not be written.
 */
async function prepare(claim: OwnedClaim): Promise<Member | CommitOutcome> {
  const parsed = await movementOf(claim);
  if (typeof parsed === "string") {
    // Retrying cannot help: fail it now, visibly, for a person to look at.
    return (await failClaim(claim, parsed)) ? { kind: "deferred", reason: parsed, failed: true } : { kind: "fenced" };
  }
  const confirmed = await confirmWithProvider(claim, parsed);
  if (!("post" in confirmed)) return confirmed;
  return { claim, movement: confirmed.post };
}

/** The one claim's commit: a batch of one (the tests' and the fallback's entry point). */
export async function commitClaim(claim: OwnedClaim): Promise<CommitOutcome> {
  const [outcome] = await commitBatch([claim]);
  if (outcome!.kind === "error") throw outcome!.error;
  return outcome!;
}

/**
 * Step 4 for a whole pick-up: the claims' postings, entries, DONE marks, raw
 * events and receipts in ONE transaction. A member that cannot commit (fenced,
 * deferred, held) is found before it writes anything; one whose write fails aborts
 * the transaction, which is run again without it (writeBatch): the rest commit. The balance changes are summed over the batch
 * and applied once per account and currency, last, in a fixed order: two replicas
 * wait for each other at most once per batch (not once per event), for no more than
 * a commit, and never deadlock. Returns one outcome per claim, in the claims' order.
 */
export async function commitBatch(claims: OwnedClaim[], concurrency = 4): Promise<BatchOutcome[]> {
  const outcomes: (BatchOutcome | undefined)[] = Array(claims.length);
  const members: { index: number; member: Member }[] = [];
  await inParallel(claims.keys(), concurrency, async (i) => {
    try {
      const ready = await prepare(claims[i]!);
      if ("claim" in ready) members.push({ index: i, member: ready });
      else outcomes[i] = ready;
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      outcomes[i] = { kind: "error", error };
    }
  });
  if (members.length === 0) return outcomes as BatchOutcome[];
  const faultDelay = config().TALLY_FAULT_WORKER_DELAY_MS;
  if (faultDelay > 0) await sleep(faultDelay);

  // Payments before refunds, payouts before failed payouts (a refund of a payment in
  // the same batch then finds it posted), then in the order received.
  members.sort(
    (a, b) =>
      Number(!AWAITED_KINDS.has(a.member.movement.kind)) - Number(!AWAITED_KINDS.has(b.member.movement.kind)) ||
      Number(a.member.claim.claimId - b.member.claim.claimId),
  );
  const spans = traceCommit(members.map((m) => m.member));
  let decided: Decided[];
  try {
    decided = await writeBatch(members.map((m) => m.member));
  } catch (error) {
    if (isDatabaseUnavailable(error) || members.length === 1) throw error;
    // The batch failed as a whole (a deadlock, or a check the database runs only at
    // commit): nothing of it was written. Each member is committed alone instead,
    // so the one at fault does not keep the others from their ledger.
    decided = [];
    for (const { member } of members) {
      try {
        decided.push(...(await writeBatch([member])));
      } catch (alone) {
        if (isDatabaseUnavailable(alone)) throw alone;
        decided.push({ kind: "error", error: alone });
      }
    }
  }
  spans?.end(decided);
  if (decided.some((d) => d.kind === "posted")) wake(OUTBOX_CHANNEL);
  if (decided.some((d) => d.kind === "posted" && d.woken > 0)) wake(CLAIMS_CHANNEL);
  for (const [n, d] of decided.entries()) {
    const { index, member } = members[n]!;
    outcomes[index] = await settle(member.claim, d);
  }
  return outcomes as BatchOutcome[];
}

/**
 * With tracing on: the batch's transaction as a span of its own (batch.commit),
 * linked to one event.commit span per member in that member's trace, and back.
 * Each member's receipt will continue from its event.commit span.
 */
function traceCommit(members: Member[]) {
  if (!tracingOn()) return null;
  const startTime = Date.now();
  const perMember = members.map((m) =>
    spanIn(m.claim.traceParent, "event.commit", {
      startTime,
      attributes: {
        "tally.claim.id": m.claim.claimId.toString(),
        "tally.provider": m.claim.provider,
        "tally.reference": m.claim.reference,
        "tally.raw_event.id": m.claim.rawEventId.toString(),
      },
    }),
  );
  if (!perMember.some(Boolean)) return null;
  const batch = tracer().startSpan(
    "batch.commit",
    {
      startTime,
      attributes: { "tally.batch.members": members.length },
      links: perMember.flatMap((s) => (s ? [{ context: s.spanContext() }] : [])),
    },
    ROOT_CONTEXT,
  );
  for (const [i, span] of perMember.entries()) {
    span?.addLink({ context: batch.spanContext() });
    members[i]!.receiptTraceParent = traceparentOf(span);
  }
  return {
    end(decided: Decided[]) {
      for (const [i, span] of perMember.entries()) {
        const d = decided[i];
        span?.setAttribute("tally.outcome", d?.kind === "abort" ? d.abort.kind : (d?.kind ?? "unknown"));
        endSpan(span, d?.kind === "error" ? String(d.error) : undefined);
      }
      endSpan(batch);
    },
  };
}

/** After the transaction: a member's decision becomes the claim's state change (each fenced by its token). */
async function settle(claim: OwnedClaim, d: Decided): Promise<BatchOutcome> {
  if (d.kind === "posted") return { kind: "posted", postingId: d.postingId, outboxId: d.outboxId };
  if (d.kind === "error") return d;
  const abort = d.abort;
  if (abort.kind === "fenced") return { kind: "fenced" };
  if (abort.kind === "hold") {
    const { reason, conflict, evidence } = abort;
    return (await holdOverWithdrawal(claim, reason, conflict, evidence))
      ? { kind: "held", reason }
      : { kind: "fenced" };
  }
  const { reason, waitingFor } = abort;
  if (waitingFor) {
    const released = await releaseClaimToWait(claim, reason, waitingFor);
    return released ? { kind: "deferred", reason, failed: false } : { kind: "fenced" };
  }
  const released = await releaseWithBackoff(claim, reason);
  return released ? { kind: "deferred", reason, failed: released.failed } : { kind: "fenced" };
}

async function inParallel(items: Iterable<number>, limit: number, fn: (item: number) => Promise<void>): Promise<void> {
  const list = [...items];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, list.length) }, async () => {
      while (next < list.length) await fn(list[next++]!);
    }),
  );
}

/**
 * The payment (payout) a member's advisory lock is about: its own reference, or the
 * payment a refund refunds or a dispute takes from (the payout a failure returns), so
 * the refunds and disputes of one payment are checked against it one at a time.
 * Other kinds lock nothing.
 */
const lockedPayment = (m: Member): string | undefined =>
  AWAITED_KINDS.has(m.movement.kind)
    ? m.movement.reference
    : AWAITS[m.movement.kind] || WITHDRAWING.has(m.movement.kind)
      ? m.movement.paymentReference
      : undefined;

/** Kinds that take a payment's money back: together they cannot take more than it (refuseOverWithdrawal). */
const WITHDRAWING: ReadonlySet<string> = new Set(["REFUND", "DISPUTE"]);

/** A member's write failed and aborted the transaction: the batch is retried without it. */
class MemberFailed extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super(`batch member ${index} failed`);
  }
}

/**
 * The batch's transaction, retried without any member whose write fails (a refused
 * write aborts the whole transaction; the members that cannot commit for known
 * reasons, fenced, deferred or held, are found before they write anything, so they
 * need no savepoint: a round trip per member saved, which is most of a batch's time).
 * Returns one decision per member, in the members' order.
 */
async function writeBatch(members: Member[]): Promise<Decided[]> {
  const failed = new Map<number, Decided>();
  let bulk = true;
  for (;;) {
    const left = members.map((m, i) => ({ m, i })).filter(({ i }) => !failed.has(i));
    if (left.length === 0) return members.map((_, i) => failed.get(i)!);
    try {
      const decided = await writeBatchOnce(
        left.map(({ m }) => m),
        bulk,
      );
      const byIndex = new Map(left.map(({ i }, n) => [i, decided[n]!]));
      return members.map((_, i) => failed.get(i) ?? byIndex.get(i)!);
    } catch (error) {
      // The one statement of the plain members was refused: it cannot say whose row it
      // was, so the batch runs again with each member written alone, which does.
      if (error instanceof BulkFailed) {
        bulk = false;
        continue;
      }
      if (!(error instanceof MemberFailed)) throw error;
      failed.set(left[error.index]!.i, { kind: "error", error: error.error });
    }
  }
}

/**
 * Whether a movement can be posted in the pick-up's own transaction: a plain one
 * (PLAIN_KINDS), alone in its event, of a provider not asked to confirm it (no network
 * call may happen inside a transaction). The fault hooks that stand a worker between
 * its claim and its commit keep every claim on the commit step.
 */
export function postableInPickUp(provider: Provider, movement: Movement, movementsInEvent: number): boolean {
  const c = config();
  return (
    c.TALLY_WORKER_COMMIT_IN_PICKUP &&
    c.TALLY_FAULT_WORKER_DELAY_MS === 0 &&
    c.TALLY_FAULT_PAUSE_AT !== "after-claim" &&
    movementsInEvent === 1 &&
    PLAIN_KINDS.has(movement.kind) &&
    !adapterFor(provider)?.confirm
  );
}

/**
 * Step 4 inside step 2's transaction, for the claims the pick-up inserted DONE
 * (postableInPickUp): the claim's INSERT … ON CONFLICT DO NOTHING still decides who
 * acts (a concurrent duplicate waits on its key, then finds it taken), and what is
 * written is what the commit step writes (writePlain, the batch's balances), but claim,
 * posting, DONE and receipt commit together. The commit step writes each claim twice
 * (inserted CLAIMED, updated DONE) and each raw event twice (CLAIMED, then DONE), every
 * write a new row version with an entry in each index, and commits twice per batch. A
 * crash anywhere rolls the claims back with the rest: the events are still RECEIVED
 * and on the queue, and the next pick-up takes them (no take-over, no attempt
 * counted). Under a savepoint: if the write is refused, the claims go back to CLAIMED
 * for the commit step, which finds the member at fault.
 */
export async function commitInPickUp(
  tx: Tx,
  claims: OwnedClaim[],
): Promise<Map<bigint, { postingId: bigint; outboxId: bigint; woken: number }>> {
  const posted = new Map<bigint, { postingId: bigint; outboxId: bigint; woken: number }>();
  const members: Member[] = claims.filter((c) => c.claimedDone).map((claim) => ({ claim, movement: claim.movement! }));
  if (members.length === 0) return posted;
  const spans = traceCommit(members);
  await tx.$executeRaw(Prisma.sql`SAVEPOINT commit_in_pickup`);
  let written: Awaited<ReturnType<typeof writePlain>>;
  try {
    await lockPayments(tx, members);
    const accounts = await accountsOf(tx, members);
    written = await writePlain(tx, members, accounts, true);
    if (written.some((w) => w === null)) throw new Error("a claim inserted DONE was not written");
    const net: Net = new Map();
    for (const w of written) addLegsTo(net, w!.legs);
    await pauseIfFaultAt("after-ledger-write");
    await applyBalances(tx, net);
    // The checks deferred to COMMIT (a posting sums to zero) run now, under the savepoint:
    // refused at the pick-up's COMMIT, they would take its claims and verdicts down with them.
    await tx.$executeRaw(Prisma.sql`SET CONSTRAINTS ALL IMMEDIATE`);
    await tx.$executeRaw(Prisma.sql`RELEASE SAVEPOINT commit_in_pickup`);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    await tx.$executeRaw(Prisma.sql`ROLLBACK TO SAVEPOINT commit_in_pickup`);
    await tx.$executeRaw(Prisma.sql`
      UPDATE processed_events SET status = 'CLAIMED', done_at = NULL
      WHERE id = ANY(${members.map((m) => m.claim.claimId.toString())}::bigint[]) AND status = 'DONE'`);
    for (const m of members) m.claim.claimedDone = false;
    spans?.end(members.map(() => ({ kind: "error", error: `left for the commit step: ${String(error)}` })));
    return posted;
  }
  spans?.end(written.map((w) => ({ kind: "posted", postingId: w!.postingId, outboxId: w!.outboxId, woken: w!.woken })));
  for (const [i, w] of written.entries())
    posted.set(members[i]!.claim.claimId, { postingId: w!.postingId, outboxId: w!.outboxId, woken: w!.woken });
  return posted;
}

/** The plain members' one statement failed; the batch is retried member by member. */
class BulkFailed extends Error {
  constructor(readonly error: unknown) {
    super("the batch's plain members could not be written together");
  }
}

/**
 * Kinds written together in one statement (writePlain): nothing they write depends on
 * another member of the batch, and nothing checks them against other claims. Refunds,
 * disputes, reinstatements and failed payouts read what the batch wrote before them
 * (their payment, its other withdrawals), so they are written one at a time, after.
 */
const PLAIN_KINDS: ReadonlySet<string> = new Set(["PAYMENT", "PAYOUT", "FEE", "ADJUSTMENT"]);

/**
 * Every payment lock the members need, in one statement, sorted: two batches needing
 * the same payments take them in the same order, so they wait rather than deadlock.
 */
async function lockPayments(tx: Tx, members: Member[]): Promise<void> {
  const locks = [
    ...new Set(
      members.flatMap((m) => {
        const ref = lockedPayment(m);
        return ref === undefined ? [] : [paymentLockKey(m.claim.tenantId, m.claim.provider, ref)];
      }),
    ),
  ].sort();
  if (locks.length > 0)
    await tx.$queryRaw(Prisma.sql`
      SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))::int AS n
      FROM (SELECT k FROM unnest(${locks}::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n) s`);
}

/**
 * The accounts the members are known to need, created in one statement in a fixed
 * order (for the same reason), and their ids.
 */
async function accountsOf(tx: Tx, members: Member[]): Promise<Map<string, bigint>> {
  const needed = new Map<string, { tenantId: string; code: string; kind: AccountKind }>();
  for (const { claim, movement } of members) {
    const clearing = clearingAccountCode(claim.provider);
    needed.set(`${claim.tenantId}|${clearing}`, {
      tenantId: claim.tenantId,
      code: clearing,
      kind: "PROVIDER_CLEARING",
    });
    const counter = counterAccount(claim.provider, movement);
    if (counter) needed.set(`${claim.tenantId}|${counter.code}`, { tenantId: claim.tenantId, ...counter });
  }
  return ensureAccounts(tx, [...needed.values()]);
}

/** Adds legs to a batch's balance changes. */
function addLegsTo(net: Net, legs: Leg[]): void {
  for (const l of legs) {
    const k = `${l.accountId}|${l.currency}`;
    const cur = net.get(k);
    if (cur) cur.amount += l.amount;
    else net.set(k, { ...l });
  }
}

async function writeBatchOnce(members: Member[], bulk: boolean): Promise<Decided[]> {
  return prisma.$transaction(
    async (tx) => {
      await lockPayments(tx, members);
      // Ids of this transaction's accounts, reused by its members.
      const accounts = await accountsOf(tx, members);

      const net: Net = new Map();
      const addLegs = (legs: Leg[]) => addLegsTo(net, legs);
      const decided: Decided[] = Array(members.length);
      // Plain members first (payments and payouts among them, so a refund in the batch finds its payment posted).
      const plain = bulk ? [...members.keys()].filter((i) => PLAIN_KINDS.has(members[i]!.movement.kind)) : [];
      if (plain.length > 0) {
        let written: Awaited<ReturnType<typeof writePlain>>;
        try {
          written = await writePlain(
            tx,
            plain.map((i) => members[i]!),
            accounts,
          );
        } catch (error) {
          if (isDatabaseUnavailable(error)) throw error;
          throw new BulkFailed(error);
        }
        for (const [n, i] of plain.entries()) {
          const w = written[n]!;
          if (w === null) {
            decided[i] = { kind: "abort", abort: { kind: "fenced" } };
            continue;
          }
          addLegs(w.legs);
          decided[i] = { kind: "posted", postingId: w.postingId, outboxId: w.outboxId, woken: w.woken };
        }
      }
      const isPlain = new Set(plain);
      for (const [index, member] of members.entries()) {
        if (isPlain.has(index)) continue;
        try {
          const written = await writeMember(tx, member, accounts);
          addLegs(written.legs);
          decided[index] = {
            kind: "posted",
            postingId: written.postingId,
            outboxId: written.outboxId,
            woken: written.woken,
          };
        } catch (error) {
          if (error instanceof Abort) decided[index] = { kind: "abort", abort: error.outcome };
          else if (isDatabaseUnavailable(error)) throw error;
          else throw new MemberFailed(index, error);
        }
      }

      await pauseIfFaultAt("after-ledger-write");
      await applyBalances(tx, net);
      return decided;
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}

/**
 * A payout's own row (what its statement and the bank match read), written with its
 * posting: the webhook's amount as ours, the destination and arrival day. A failed
 * payout marks it FAILED. The settlement's figure (their_amount) is reconciliation's.
 */
async function recordPayout(tx: Tx, claim: OwnedClaim, movement: Movement, postingId: bigint): Promise<void> {
  if (movement.kind === "PAYOUT") {
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO payouts (tenant_id, provider, reference, currency, our_amount, destination, arrival_date, bank_reference, posting_id)
      VALUES (${claim.tenantId}::uuid, ${claim.provider}::"Provider", ${movement.reference}, ${movement.currency}, ${movement.amount},
              ${movement.account}, ${movement.arrivalDate ?? null}::date, ${movement.bankReference ?? null}::text, ${postingId})
      ON CONFLICT (tenant_id, provider, reference) DO UPDATE SET our_amount = EXCLUDED.our_amount, destination = coalesce(EXCLUDED.destination, payouts.destination),
        arrival_date = coalesce(EXCLUDED.arrival_date, payouts.arrival_date),
        -- A movement that does not say (most webhooks) leaves the bank reference a settlement gave.
        bank_reference = coalesce(EXCLUDED.bank_reference, payouts.bank_reference), posting_id = EXCLUDED.posting_id, updated_at = now()`);
    return;
  }
  await tx.$executeRaw(Prisma.sql`
    UPDATE payouts SET status = 'FAILED', updated_at = now()
    WHERE tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND reference = ${movement.paymentReference ?? ""}`);
}

/** The advisory lock namespace of balance slots: pg_locks shows it as classid. */
export const BALANCE_SLOT_LOCK_CLASS = 0x7a12;

/**
 * The batch's balance changes, one row per account and currency, sorted, in one
 * statement: the last write before COMMIT, so its row locks are held only for the
 * commit itself. Each goes to a slot of the balance (BALANCE_SLOTS rows, summed on
 * read) that no other open transaction holds: the lowest whose advisory lock it gets,
 * held to COMMIT like the rows. Two replicas, or two loops of one, write different rows
 * of the clearing balance, and of a customer both their batches pay, and do not wait
 * for each other's commit, up to BALANCE_SLOTS committing at once; the lowest free slot
 * keeps an account to as many rows as transactions ever wrote it at once. Before: the
 * clearing balance only, in the slot of pid % 16, which let two of a drain's four loops
 * share a row for the life of their connections, and customers in slot 0 (bench:worker,
 * 100,000 payments over 1,000 customers: lock waits writing balances in 2-3 samples of
 * ~1,750 of its 2-replica passes).
 */
async function applyBalances(tx: Tx, net: Net): Promise<void> {
  const sql = balancesSql(net);
  if (sql) await tx.$executeRaw(sql);
}

/** applyBalances' statement (null when nothing moves), for a test to run on connections of its choosing. */
export function balancesSql(net: Net): Prisma.Sql | null {
  const rows = [...net.values()]
    .filter((r) => r.amount !== 0n)
    .sort((a, b) =>
      a.accountId === b.accountId ? (a.currency < b.currency ? -1 : 1) : a.accountId < b.accountId ? -1 : 1,
    );
  if (rows.length === 0) return null;
  return Prisma.sql`
    INSERT INTO balances (account_id, currency, slot, amount, updated_at)
    SELECT a, c, (
      SELECT coalesce(
        -- No ORDER BY: a sort would read every row, so take every slot's lock; the series comes in order.
        (SELECT s FROM generate_series(0, ${BALANCE_SLOTS - 1}) s WHERE pg_try_advisory_xact_lock(${BALANCE_SLOT_LOCK_CLASS}::int, s) LIMIT 1),
        -- More transactions committing at once than slots: share one, and wait.
        pg_backend_pid() % ${BALANCE_SLOTS})), m, now()
    FROM unnest(${rows.map((r) => r.accountId.toString())}::bigint[], ${rows.map((r) => r.currency)}::text[], ${rows.map((r) => r.amount.toString())}::bigint[]) WITH ORDINALITY AS v(a, c, m, n)
    ORDER BY n
    ON CONFLICT (account_id, currency, slot) DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()`;
}

/**
 * One member's effect inside the batch's transaction: throws an Abort, before
 * writing anything, when it must not be posted (now), and returns its legs for the
 * batch's balances.
 */
async function writeMember(
  tx: Tx,
  { claim, movement, receiptTraceParent }: Member,
  accounts: Map<string, bigint>,
): Promise<{ postingId: bigint; outboxId: bigint; woken: number; legs: Leg[] }> {
  let counter = counterAccount(claim.provider, movement);
  const awaited = AWAITS[movement.kind] as "PAYMENT" | "PAYOUT" | undefined;
  // A refund naming no account takes its payment's; a failed payout always waits for its
  // payout (returning money that never left would take the bank account below zero).
  if (awaited && (!counter || movement.kind === "PAYOUT_FAILED")) {
    const found = movement.paymentReference
      ? await accountOfAwaited(tx, claim, awaited, movement.paymentReference)
      : null;
    const what = awaited === "PAYMENT" ? "payment" : "payout";
    if (!found)
      throw new Abort({
        kind: "defer",
        reason: `${movement.kind === "REFUND" ? "refund" : "failed payout"} ${movement.reference}: ${what} ${movement.paymentReference ?? "(not named)"} is not posted yet, so its account is unknown`,
        waitingFor: movement.paymentReference,
      });
    counter = found;
  }
  // The batch holds the payment's lock (see lockPaymentReference): refunds that arrived
  // first wait for this payment, and two refunds (or a refund and a dispute) of one
  // payment cannot both fit under its amount.
  if (WITHDRAWING.has(movement.kind) && movement.paymentReference)
    await refuseOverWithdrawal(tx, claim, movement, movement.paymentReference);
  const customer = counter!.code;
  // An account found through the awaited posting exists already (its entries name it).
  const customerId =
    accounts.get(`${claim.tenantId}|${customer}`) ??
    (await ensureAccounts(tx, [{ tenantId: claim.tenantId, code: customer, kind: counter!.kind }])).get(
      `${claim.tenantId}|${customer}`,
    )!;
  const clearingId = accounts.get(`${claim.tenantId}|${clearingAccountCode(claim.provider)}`)!;
  // A payment: the provider owes us (debit clearing), we owe the customer (credit customer);
  // a refund reverses it; the other kinds: lib/ledger/movements.ts.
  const legs = movementLegs(movement, clearingId, customerId);
  assertBalanced(legs);
  const payload = receiptPayload(claim, movement, customer);
  const alone = claim.movementsInEvent === 1;
  const isPayment = AWAITED_KINDS.has(movement.kind);
  // One statement, so the member's effect costs one round trip: every part hangs
  // off the fenced claim, and writes nothing if the token is no longer current.
  // Its balance change is not here: the batch applies its sum once, at the end.
  const [written] = await tx.$queryRaw<{ posting_id: bigint; outbox_id: bigint; woken: number }[]>(Prisma.sql`
    WITH fence AS (
      UPDATE processed_events SET status = 'DONE', done_at = now(), last_error = NULL, retry_at = NULL, waiting_for = NULL, provider_wait_since = NULL
      WHERE id = ${claim.claimId} AND claim_version = ${claim.version} AND status = 'CLAIMED' AND claimed_at IS NOT NULL
      RETURNING id),
    posting AS (
      INSERT INTO postings (tenant_id, kind, processed_event_id, provider, provider_reference, description, occurred_at)
      SELECT ${claim.tenantId}::uuid, ${movement.kind}::"PostingKind", fence.id, ${claim.provider}::"Provider", ${movement.reference}, ${movement.description}, ${movement.occurredAt}
      FROM fence RETURNING id),
    entries AS (
      INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
      SELECT posting.id, l.account, l.amount, l.currency FROM posting,
        unnest(${legs.map((l) => l.accountId.toString())}::bigint[], ${legs.map((l) => l.amount.toString())}::bigint[], ${legs.map((l) => l.currency)}::text[]) AS l(account, amount, currency)),
    raw AS (
      UPDATE raw_events SET status = 'DONE', processed_at = now()
      WHERE ${alone} AND id = ${claim.rawEventId} AND status = 'CLAIMED' AND EXISTS (SELECT 1 FROM fence)),
    outbox AS (
      INSERT INTO outbox (tenant_id, kind, posting_id, payload, trace_parent)
      SELECT ${claim.tenantId}::uuid, 'receipt', posting.id, ${JSON.stringify(payload)}::jsonb, ${receiptTraceParent ?? null} FROM posting RETURNING id),
    -- Refunds that arrived first and wait for this payment may go now.
    woken AS (
      UPDATE processed_events SET retry_at = now()
      WHERE ${isPayment} AND status = 'CLAIMED' AND claimed_at IS NULL AND waiting_for = ${movement.reference}
        AND tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND EXISTS (SELECT 1 FROM fence)
      RETURNING id)
    SELECT posting.id AS posting_id, outbox.id AS outbox_id, (SELECT count(*)::int FROM woken) AS woken FROM posting, outbox`);
  if (!written) throw new Abort({ kind: "fenced" });
  if (movement.kind === "PAYOUT" || movement.kind === "PAYOUT_FAILED")
    await recordPayout(tx, claim, movement, written.posting_id);

  if (!alone) await finishEventOfMany(tx, claim.rawEventId);
  return { postingId: written.posting_id, outboxId: written.outbox_id, woken: written.woken, legs };
}

/** What a posting's receipt says. */
function receiptPayload(claim: OwnedClaim, movement: Movement, account: string) {
  return {
    kind: movement.kind,
    provider: claim.provider,
    reference: movement.reference,
    account,
    amount: movement.amount.toString(),
    currency: movement.currency,
    occurredAt: movement.occurredAt.toISOString(),
  };
}

/**
 * A raw event carrying several movements (an Adyen batch) is DONE once its last claim
 * is: lock the event before counting its unfinished claims, so two of them committing
 * at once cannot both think the other is unfinished.
 */
async function finishEventOfMany(tx: Tx, rawEventId: bigint): Promise<void> {
  await tx.$queryRaw(Prisma.sql`SELECT id FROM raw_events WHERE id = ${rawEventId} FOR UPDATE`);
  await tx.$executeRaw(Prisma.sql`
    UPDATE raw_events SET status = 'DONE', processed_at = now()
    WHERE id = ${rawEventId} AND status = 'CLAIMED'
      AND NOT EXISTS (SELECT 1 FROM processed_events WHERE raw_event_id = ${rawEventId} AND status <> 'DONE')`);
}

/**
 * The plain members of a batch (PLAIN_KINDS) in ONE statement: what writeMember writes
 * for one claim, for all of them, each row hanging off its own fenced claim. A member
 * whose token is no longer current writes nothing and comes back null. Per member,
 * writeMember's statement cost ~0.42 ms in PostgreSQL plus a round trip through Prisma
 * (bench:worker at 20,000: 413 movements/s, the member statement the busiest in 36% of
 * pg_stat_activity samples); as one statement the batch costs about one of them.
 */
async function writePlain(
  tx: Tx,
  members: Member[],
  accounts: Map<string, bigint>,
  /** In the pick-up's transaction (commitInPickUp): the claims were inserted DONE, and the pick-up records its raw events' outcome. */
  inPickUp = false,
): Promise<({ postingId: bigint; outboxId: bigint; woken: number; legs: Leg[] } | null)[]> {
  const rows = members.map(({ claim, movement, receiptTraceParent }) => {
    const counter = counterAccount(claim.provider, movement)!;
    const customerId = accounts.get(`${claim.tenantId}|${counter.code}`)!;
    const clearingId = accounts.get(`${claim.tenantId}|${clearingAccountCode(claim.provider)}`)!;
    const legs = movementLegs(movement, clearingId, customerId);
    assertBalanced(legs);
    // Written as clearing_id/counter_id and one amount: a plain movement has exactly these two legs.
    if (legs.length !== 2 || legs[1]!.amount !== -legs[0]!.amount || legs[1]!.currency !== legs[0]!.currency)
      throw new Error(`${movement.kind} ${movement.reference}: not a two-leg movement`);
    return { claim, movement, legs, payload: receiptPayload(claim, movement, counter.code), receiptTraceParent };
  });
  const col = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f);
  // Each row's ids are drawn from the sequences in `m` and every part is written from
  // `mine` alone, with no join between the parts: joined, CTE scans (estimated at one
  // row) were planned as nested loops, and a batch of 250 compared 124,500 row pairs
  // for its entries alone (46 ms of its 122).
  const written = await tx.$queryRaw<{ claim_id: bigint; posting_id: bigint; outbox_id: bigint; woken: number }[]>(
    Prisma.sql`
    WITH m AS MATERIALIZED (
      SELECT *, nextval('postings_id_seq') AS posting_id, nextval('outbox_id_seq') AS outbox_id FROM unnest(
        ${col((r) => r.claim.claimId.toString())}::bigint[], ${col((r) => r.claim.version)}::int[],
        ${col((r) => r.claim.tenantId)}::uuid[], ${col((r) => r.claim.provider)}::"Provider"[],
        ${col((r) => r.movement.kind)}::"PostingKind"[], ${col((r) => r.movement.reference)}::text[],
        ${col((r) => r.movement.description)}::text[], ${col((r) => r.movement.occurredAt.toISOString())}::timestamptz[],
        ${col((r) => r.claim.rawEventId.toString())}::bigint[], ${col((r) => r.claim.movementsInEvent === 1)}::boolean[],
        ${col((r) => JSON.stringify(r.payload))}::jsonb[], ${col((r) => r.receiptTraceParent ?? null)}::text[],
        ${col((r) => r.legs[0]!.accountId.toString())}::bigint[], ${col((r) => r.legs[1]!.accountId.toString())}::bigint[],
        ${col((r) => r.legs[0]!.amount.toString())}::bigint[], ${col((r) => r.legs[0]!.currency)}::text[])
      WITH ORDINALITY AS u(claim_id, version, tenant_id, provider, kind, reference, description, occurred_at, raw_event_id, alone, payload, trace_parent, clearing_id, counter_id, amount, currency, n)),
    fence AS (${
      inPickUp
        ? Prisma.sql`SELECT claim_id AS id FROM m`
        : Prisma.sql`
      UPDATE processed_events p SET status = 'DONE', done_at = now(), last_error = NULL, retry_at = NULL, waiting_for = NULL, provider_wait_since = NULL
      FROM m WHERE p.id = m.claim_id AND p.claim_version = m.version AND p.status = 'CLAIMED' AND p.claimed_at IS NOT NULL
      RETURNING p.id`
    }),
    mine AS MATERIALIZED (SELECT m.* FROM m WHERE m.claim_id IN (SELECT id FROM fence)),
    posting AS (
      INSERT INTO postings (id, tenant_id, kind, processed_event_id, provider, provider_reference, description, occurred_at)
      SELECT posting_id, tenant_id, kind, claim_id, provider, reference, description, occurred_at FROM mine ORDER BY n),
    entries AS (
      INSERT INTO ledger_entries (posting_id, account_id, amount, currency)
      SELECT posting_id, clearing_id, amount, currency FROM mine
      UNION ALL SELECT posting_id, counter_id, -amount, currency FROM mine),
    raw AS (
      UPDATE raw_events r SET status = 'DONE', processed_at = now()
      FROM mine WHERE ${!inPickUp} AND mine.alone AND r.id = mine.raw_event_id AND r.status = 'CLAIMED'
        -- The ids again as an array: the join alone cannot prune raw_events to its months.
        AND r.id = ANY(${col((r) => r.claim.rawEventId.toString())}::bigint[])),
    outbox AS (
      INSERT INTO outbox (id, tenant_id, kind, posting_id, payload, trace_parent)
      SELECT outbox_id, tenant_id, 'receipt', posting_id, payload, trace_parent FROM mine ORDER BY n),
    -- Refunds (failed payouts) that arrived first and wait for a payment (payout) of the batch may go now.
    woken AS (
      UPDATE processed_events p SET retry_at = now()
      FROM mine WHERE mine.kind IN ('PAYMENT', 'PAYOUT') AND p.status = 'CLAIMED' AND p.claimed_at IS NULL
        AND p.waiting_for = mine.reference AND p.tenant_id = mine.tenant_id AND p.provider = mine.provider
      RETURNING mine.claim_id)
    SELECT claim_id, posting_id, outbox_id, (SELECT count(*)::int FROM woken WHERE woken.claim_id = mine.claim_id) AS woken
    FROM mine`,
  );
  const byClaim = new Map(written.map((w) => [w.claim_id, w]));
  const out: ({ postingId: bigint; outboxId: bigint; woken: number; legs: Leg[] } | null)[] = [];
  for (const r of rows) {
    const w = byClaim.get(r.claim.claimId);
    if (!w) {
      out.push(null);
      continue;
    }
    if (r.movement.kind === "PAYOUT") await recordPayout(tx, r.claim, r.movement, w.posting_id);
    if (r.claim.movementsInEvent !== 1) await finishEventOfMany(tx, r.claim.rawEventId);
    out.push({ postingId: w.posting_id, outboxId: w.outbox_id, woken: w.woken, legs: r.legs });
  }
  return out;
}
