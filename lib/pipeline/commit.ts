// Step 4 of the protocol: the effect and its record commit together. In ONE
// transaction: the claim turns DONE (only while our fencing token is current),
// the balanced posting and balance changes are written, the raw event is marked
// done, and a receipt is queued in the outbox. No network call happens inside.
import { openSettings } from "@/lib/platform/secrets-at-rest";
import { setTimeout as sleep } from "node:timers/promises";
import { canonical, parseRaw, type OwnedClaim } from "@/lib/pipeline/claim";
import {
  failClaim,
  holdOverRefund,
  lockPaymentReference,
  releaseClaimToWait,
  releaseClaimToWaitForProvider,
  releaseWithBackoff,
} from "@/lib/pipeline/claim-state";
import { config } from "@/lib/platform/config";
import { pauseIfFaultAt } from "@/lib/pipeline/fault";
import { Prisma, prisma, type Tx } from "@/lib/platform/db";
import {
  assertBalanced,
  clearingAccountCode,
  customerAccountCode,
  ensureAccount,
  UNALLOCATED_ACCOUNT,
} from "@/lib/ledger/postings";
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
    select: { rawBody: true, provider: true },
  });
  if (!raw) return `raw event ${claim.rawEventId} not found`;
  const parsed = parseRaw(raw.provider, raw.rawBody);
  if (parsed.kind !== "money")
    return `raw event ${claim.rawEventId} no longer parses to money: ${parsed.kind === "failed" ? parsed.error : parsed.reason}`;
  return (
    parsed.movements.find((m) => m.reference === claim.reference) ??
    `raw event ${claim.rawEventId} no longer carries ${claim.reference}`
  );
}

/** The customer account a refund takes money from, when its payload does not name one: the refunded payment's. */
async function accountOfPayment(tx: Tx, claim: OwnedClaim, paymentReference: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ code: string }[]>(Prisma.sql`
    SELECT a.code FROM postings p
    JOIN ledger_entries e ON e.posting_id = p.id
    JOIN accounts a ON a.id = e.account_id AND a.kind = 'CUSTOMER'
    WHERE p.tenant_id = ${claim.tenantId}::uuid AND p.provider = ${claim.provider}::"Provider"
      AND p.provider_reference = ${paymentReference} AND p.kind = 'PAYMENT'
    LIMIT 1`);
  return rows[0]?.code ?? null;
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
 * Throws a hold when this refund would take the payment's refunded total past the
 * payment's amount (in its currency). Runs under the payment's advisory lock, in
 * the commit's transaction: a concurrent refund of the same payment waits for this
 * commit and then counts this refund. A payment not posted yet cannot be checked
 * (its amount is unknown); refunds naming no account wait for it anyway.
 */
async function refuseOverRefund(
  tx: Tx,
  claim: OwnedClaim,
  movement: Movement,
  paymentReference: string,
): Promise<void> {
  await lockPaymentReference(tx, claim.tenantId, claim.provider, paymentReference);
  const claims = await tx.$queryRaw<
    { raw_event_id: bigint; reference: string; kind: string; amount: bigint; currency: string; status: string }[]
  >(Prisma.sql`
    SELECT raw_event_id, provider_reference AS reference, movement_kind::text AS kind, amount, trim(currency) AS currency, status::text
    FROM processed_events
    WHERE tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND amount IS NOT NULL
      AND ((provider_reference = ${paymentReference} AND movement_kind = 'PAYMENT' AND status = 'DONE')
        OR (payment_reference = ${paymentReference} AND movement_kind = 'REFUND' AND status IN ('DONE', 'HELD')))
    ORDER BY id`);
  const payment = claims.find((c) => c.kind === "PAYMENT");
  if (!payment || payment.currency !== movement.currency) return;
  const refunded = claims
    .filter((c) => c.kind === "REFUND" && c.status === "DONE" && c.currency === movement.currency)
    .reduce((sum, c) => sum + c.amount, 0n);
  if (refunded + movement.amount <= payment.amount) return;
  const side = (c: (typeof claims)[number]) => ({
    reference: c.reference,
    kind: c.kind,
    amount: c.amount.toString(),
    currency: c.currency,
    status: c.status,
    rawEventId: c.raw_event_id.toString(),
  });
  const reason = `refund ${movement.reference} of ${movement.amount} ${movement.currency} would bring ${paymentReference}'s refunds to ${refunded + movement.amount}, past the payment's ${payment.amount}: held for accountants, not posted`;
  throw new Abort({
    kind: "hold",
    reason,
    evidence: {
      claimed: {
        payment: side(payment),
        refunds: claims.filter((c) => c.kind === "REFUND").map(side),
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

export async function commitClaim(claim: OwnedClaim): Promise<CommitOutcome> {
  const parsed = await movementOf(claim);
  if (typeof parsed === "string") {
    // Retrying cannot help: fail it now, visibly, for a person to look at.
    return (await failClaim(claim, parsed)) ? { kind: "deferred", reason: parsed, failed: true } : { kind: "fenced" };
  }
  const confirmed = await confirmWithProvider(claim, parsed);
  if (!("post" in confirmed)) return confirmed;
  const movement = confirmed.post;
  const faultDelay = config().TALLY_FAULT_WORKER_DELAY_MS;
  if (faultDelay > 0) await sleep(faultDelay);

  try {
    const result = await prisma.$transaction(
      async (tx) => {
        let customer: string;
        if (movement.account) customer = customerAccountCode(movement.account);
        else if (movement.kind === "PAYMENT") customer = UNALLOCATED_ACCOUNT;
        else {
          const found = movement.paymentReference ? await accountOfPayment(tx, claim, movement.paymentReference) : null;
          if (!found)
            throw new Abort({
              kind: "defer",
              reason: `refund ${movement.reference}: payment ${movement.paymentReference ?? "(not named)"} is not posted yet, so its account is unknown`,
              waitingFor: movement.paymentReference,
            });
          customer = found;
        }
        // Refunds that arrived first wait for this payment: see lockPaymentReference.
        if (movement.kind === "PAYMENT")
          await lockPaymentReference(tx, claim.tenantId, claim.provider, movement.reference);
        // Refunds of one payment take the payment's lock, so two cannot both fit under its amount.
        else if (movement.paymentReference) await refuseOverRefund(tx, claim, movement, movement.paymentReference);
        const customerId = await ensureAccount(tx, claim.tenantId, customer, "CUSTOMER");
        const clearingId = await ensureAccount(
          tx,
          claim.tenantId,
          clearingAccountCode(claim.provider),
          "PROVIDER_CLEARING",
        );
        // A payment: the provider owes us (debit clearing), we owe the customer (credit customer). A refund reverses it.
        const sign = movement.kind === "PAYMENT" ? 1n : -1n;
        const legs = [
          { accountId: clearingId, amount: sign * movement.amount, currency: movement.currency },
          { accountId: customerId, amount: -sign * movement.amount, currency: movement.currency },
        ];
        assertBalanced(legs);
        const payload = {
          kind: movement.kind,
          provider: claim.provider,
          reference: movement.reference,
          account: customer,
          amount: movement.amount.toString(),
          currency: movement.currency,
          occurredAt: movement.occurredAt.toISOString(),
        };
        const alone = claim.movementsInEvent === 1;
        const isPayment = movement.kind === "PAYMENT";
        // One statement, so the whole effect costs one round trip: every part hangs
        // off the fenced claim, and writes nothing if the token is no longer current.
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
          moved AS (
            INSERT INTO balances (account_id, currency, amount, updated_at)
            SELECT l.account, l.currency, l.amount, now() FROM posting,
              unnest(${legs.map((l) => l.accountId.toString())}::bigint[], ${legs.map((l) => l.amount.toString())}::bigint[], ${legs.map((l) => l.currency)}::text[]) AS l(account, amount, currency)
            ORDER BY l.account, l.currency
            ON CONFLICT (account_id, currency) DO UPDATE SET amount = balances.amount + EXCLUDED.amount, updated_at = now()),
          raw AS (
            UPDATE raw_events SET status = 'DONE', processed_at = now()
            WHERE ${alone} AND id = ${claim.rawEventId} AND status = 'CLAIMED' AND EXISTS (SELECT 1 FROM fence)),
          outbox AS (
            INSERT INTO outbox (tenant_id, kind, posting_id, payload)
            SELECT ${claim.tenantId}::uuid, 'receipt', posting.id, ${JSON.stringify(payload)}::jsonb FROM posting RETURNING id),
          -- Refunds that arrived first and wait for this payment may go now.
          woken AS (
            UPDATE processed_events SET retry_at = now()
            WHERE ${isPayment} AND status = 'CLAIMED' AND claimed_at IS NULL AND waiting_for = ${movement.reference}
              AND tenant_id = ${claim.tenantId}::uuid AND provider = ${claim.provider}::"Provider" AND EXISTS (SELECT 1 FROM fence)
            RETURNING id)
          SELECT posting.id AS posting_id, outbox.id AS outbox_id, (SELECT count(*)::int FROM woken) AS woken FROM posting, outbox`);
        if (!written) throw new Abort({ kind: "fenced" });

        await pauseIfFaultAt("after-ledger-write");

        if (!alone) {
          // Several movements in one event (an Adyen batch): lock the event before
          // counting its unfinished claims, so two of them committing at once cannot
          // both think the other is unfinished.
          await tx.$queryRaw(Prisma.sql`SELECT id FROM raw_events WHERE id = ${claim.rawEventId} FOR UPDATE`);
          await tx.$executeRaw(Prisma.sql`
            UPDATE raw_events SET status = 'DONE', processed_at = now()
            WHERE id = ${claim.rawEventId} AND status = 'CLAIMED'
              AND NOT EXISTS (SELECT 1 FROM processed_events WHERE raw_event_id = ${claim.rawEventId} AND status <> 'DONE')`);
        }
        return { postingId: written.posting_id, outboxId: written.outbox_id, woken: written.woken };
      },
      { maxWait: 10_000, timeout: 60_000 },
    );
    wake(OUTBOX_CHANNEL);
    if (result.woken > 0) wake(CLAIMS_CHANNEL);
    return { kind: "posted", postingId: result.postingId, outboxId: result.outboxId };
  } catch (error) {
    if (!(error instanceof Abort)) throw error;
    if (error.outcome.kind === "fenced") return { kind: "fenced" };
    if (error.outcome.kind === "hold") {
      const { reason, evidence } = error.outcome;
      return (await holdOverRefund(claim, reason, evidence)) ? { kind: "held", reason } : { kind: "fenced" };
    }
    const { reason, waitingFor } = error.outcome;
    if (waitingFor) {
      const released = await releaseClaimToWait(claim, reason, waitingFor);
      return released ? { kind: "deferred", reason, failed: false } : { kind: "fenced" };
    }
    const released = await releaseWithBackoff(claim, reason);
    return released ? { kind: "deferred", reason, failed: released.failed } : { kind: "fenced" };
  }
}
