// Matching payouts to the bank: each IN_TRANSIT payout of a tenant against the
// credits of its bank statements that no payout has claimed yet, by the rules of
// the payout's endpoint, in their priority order:
//   reference        the payout's reference, or its bank reference (the text the
//                    provider says its transfer carries: Adyen's "TX… batch 7,
//                    <merchant account>", since our key for it never reaches the
//                    bank), is in the credit's remittance text (case-insensitive,
//                    at least MIN_REFERENCE_CHARS long) and the amounts agree within
//                    the tolerance; a match by the bank reference says so in its note
//   reference_sum    a credit that names several payouts of one provider, by either
//                    text, and equals their sum (N payouts, one credit); a text found
//                    only inside another payout's longer one does not count (namedIn)
//   amount_date      same currency, amount within the tolerance, booked within
//                    [arrival date, arrival date + lag days], and one candidate
//                    each way (exact amounts first): any ambiguity is left
//                    unmatched, and the credit's match_note says what fits it
//   amount_date_sum  a credit equal to the sum of every unmatched payout of one
//                    provider with the same arrival date (subsets are not tried:
//                    they are guesses, not evidence)
// A match whose amounts differ is recorded as within_tolerance, with the rule and
// the difference in match_note: never silent.
//
// After the window: a payout still in transit once the statements cover the last
// day it could have arrived (arrival date + lag ≤ the latest statement's last
// day), and a credit that names a provider (STRIPE, ADYEN, …) that no payout
// explains by its booking day + lag, are each a BANK_UNMATCHED discrepancy and a
// case. A later import that matches one resolves it and closes its case, audited;
// a case parked as "timing" that is still unmatched is reopened, as a
// reconciliation run's re-check does.
//
// The import is a reconciliation run per provider it concerns (source BANK): the
// run holds the counts (payouts compared and matched, ours-not-theirs = payouts
// the bank never credited, theirs-not-ours = provider credits no payout explains)
// and the rules it used, and its discrepancies belong to it.
//
// Everything runs in the importing transaction, behind a per-tenant advisory lock:
// two imports at once match one after the other, each seeing the other's lines,
// so no credit is claimed twice and no payout matched twice.
import type { PoolClient } from "pg";
import { type Actor, SYSTEM_ACTOR } from "@/lib/admin/audit";
import type { Provider } from "@/lib/generated/prisma/enums";
import { toDecimalText } from "@/lib/ledger/money";
import { closeCasesOfResolved } from "@/lib/recon/recheck";

export type MatchRuleName = "reference" | "amount_date";
export type MatchOutcome = "reference" | "amount_date" | "reference_sum" | "amount_date_sum" | "within_tolerance";

export type Rules = { toleranceMinor: bigint; dateLagDays: number; priority: MatchRuleName[] };

/** An endpoint's rules when the tenant has no endpoint for the provider (the columns' defaults). */
export const DEFAULT_RULES: Rules = { toleranceMinor: 0n, dateLagDays: 3, priority: ["reference", "amount_date"] };

/** Names in a credit's remittance or counterparty that say a provider sent it. */
export const PROVIDER_NAMES: readonly { name: string; provider: Provider }[] = [
  { name: "stripe", provider: "stripe" },
  { name: "adyen", provider: "adyen" },
  { name: "paystack", provider: "paystack" },
  { name: "flutterwave", provider: "flutterwave" },
  { name: "paypal", provider: "paypal" },
];

/** A reference shorter than this is not looked for in remittance text: it would be found in any text. */
export const MIN_REFERENCE_CHARS = 4;

export type Match = {
  lineId: bigint;
  payouts: { id: bigint; provider: Provider; reference: string }[];
  outcome: MatchOutcome;
  note: string | null;
};

export type MatchSummary = {
  matchedPayouts: number;
  matchedCredits: number;
  withinTolerance: number;
  /** Payouts still in transit whose window the statements cover: each a discrepancy and a case. */
  unmatchedPayouts: number;
  /** Credits naming a provider that no payout explains after their window: each a discrepancy and a case. */
  unmatchedCredits: number;
  /** Credits left unmatched because more than one payout (or credit) fits. */
  ambiguous: number;
  casesOpened: number;
  casesClosed: number;
  casesReopened: number;
  /** The latest day the tenant's statements cover. */
  coveredTo: string | null;
  runs: { provider: Provider; runId: bigint }[];
  matches: Match[];
};

type Payout = {
  id: bigint;
  provider: Provider;
  reference: string;
  currency: string;
  amount: bigint | null;
  arrivalDate: string | null;
};

/** What of a payout a credit's text was found to name: our reference, or the text the provider says the bank shows. */
type By = "reference" | "bank reference";
type Named = { payout: Payout; needles: { needle: string; by: By; shown: string }[] };

/** A payout as a note names it: by its reference, and by the bank reference when that is what the credit named. */
const describeNamed = (f: Named) => {
  const n = f.needles[0]!;
  return n.by === "reference" ? f.payout.reference : `${f.payout.reference} (bank reference "${n.shown}")`;
};

const abs = (v: bigint) => (v < 0n ? -v : v);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function differenceNote(rule: string, credit: bigint, expected: bigint, currency: string, tolerance: bigint): string {
  const d = credit - expected;
  return `${rule}: the credit is ${abs(d)} minor units ${d < 0n ? "less" : "more"} than ${currency} ${expected} (tolerance ${tolerance})`;
}

/**
 * The references a text names, where one found only inside a longer one it also
 * names does not count: "po_7" is not named by "po_707".
 */
export function namedIn(text: string, references: string[]): string[] {
  const covered = new Uint8Array(text.length);
  const named: string[] = [];
  for (const ref of [...references].sort((a, b) => b.length - a.length)) {
    let alone = false;
    for (let at = text.indexOf(ref); at !== -1; at = text.indexOf(ref, at + 1)) {
      if (covered.subarray(at, at + ref.length).some((c) => c === 0)) alone = true;
      covered.fill(1, at, at + ref.length);
    }
    if (alone) named.push(ref);
  }
  return named;
}

type Q = <T extends Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

/** The rules of each provider's endpoint; unknown names in match_priority are ignored (the endpoint form refuses them). */
async function loadRules(q: Q, tenantId: string): Promise<Map<Provider, Rules>> {
  const rows = await q<{ provider: Provider; tolerance: string; lag: number; priority: string[] | null }>(
    `SELECT provider::text AS provider, match_tolerance_minor::text AS tolerance, match_date_lag_days AS lag, match_priority AS priority
     FROM provider_endpoints WHERE tenant_id = $1`,
    [tenantId],
  );
  return new Map(
    rows.map((r) => [
      r.provider,
      {
        toleranceMinor: BigInt(r.tolerance),
        dateLagDays: r.lag,
        priority: (r.priority ?? DEFAULT_RULES.priority).filter(
          (p): p is MatchRuleName => p === "reference" || p === "amount_date",
        ),
      },
    ]),
  );
}

export type MatchInput = {
  tenantId: string;
  /**
   * The statement just imported: the runs' window and source name. Null for a re-match
   * (lib/bank/rematch.ts): no new statement, only payouts that changed since the last matching.
   */
  statement: { id: bigint; sourceName: string; from: string | null; to: string | null } | null;
  actor: Actor;
  /** When the import started: a "timing" case parked before it is re-checked by it (an import only: a
   * re-match brings nothing new from the bank, so it would only reopen what a person just parked). */
  startedAt: Date;
  /** Lines the import added in this transaction. */
  linesAdded: number;
};

/** A statement this large refreshes the planner's statistics before matching. */
export const ANALYZE_AFTER_LINES = 10_000;

/** One matcher per tenant at a time; released at commit or rollback (taken again by the same transaction, it stacks). */
export async function lockBankMatching(client: PoolClient, tenantId: string): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('tally.bank-match:' || $1::text, 0))`, [tenantId]);
}

/**
 * A payout whose row changes after this is matched again without waiting for an import
 * (lib/bank/rematch.ts). The mark trails the transaction's start by REMATCH_MARGIN: a
 * worker's transaction stamps a payout's updated_at with its own start and may commit
 * after this matching read the payouts, so a mark at our start would pass over it.
 */
export async function markMatched(client: PoolClient, tenantId: string): Promise<void> {
  await client.query(`UPDATE tenants SET bank_matched_through = now() - $2::int * interval '1 second' WHERE id = $1`, [
    tenantId,
    REMATCH_MARGIN_SECONDS,
  ]);
}

/** How far the re-match mark trails a matching: longer than any transaction that writes a payout. */
export const REMATCH_MARGIN_SECONDS = 300;

/** Matches, flags and re-checks, in the caller's transaction. */
export async function matchPayouts(client: PoolClient, input: MatchInput): Promise<MatchSummary> {
  const { tenantId } = input;
  const q: Q = async (sql, params = []) => (await client.query(sql, params)).rows;
  await lockBankMatching(client, tenantId);
  await markMatched(client, tenantId);
  // Lines COPYed in this transaction are unknown to the planner's statistics: after a large statement it
  // chose plans for a small table (the amount-and-date query took 2.8 s for 50 payouts against 100,000 lines).
  // ANALYZE sees this transaction's own rows; behind the lock, one import at a time runs it.
  if (input.linesAdded >= ANALYZE_AFTER_LINES) await q("ANALYZE bank_lines");
  const rules = await loadRules(q, tenantId);
  const rulesOf = (p: Provider) => rules.get(p) ?? DEFAULT_RULES;

  const payouts = (
    await q<{
      id: string;
      provider: Provider;
      reference: string;
      currency: string;
      amount: string | null;
      arrival: string | null;
    }>(
      `SELECT id::text, provider::text AS provider, reference, currency, coalesce(their_amount, our_amount)::text AS amount, arrival_date::text AS arrival
       FROM payouts WHERE tenant_id = $1 AND status = 'IN_TRANSIT' ORDER BY id`,
      [tenantId],
    )
  ).map(
    (r): Payout => ({
      id: BigInt(r.id),
      provider: r.provider,
      reference: r.reference,
      currency: r.currency.trim(),
      amount: r.amount === null ? null : BigInt(r.amount),
      arrivalDate: r.arrival,
    }),
  );
  const examined = new Map<Provider, number>();
  for (const p of payouts) examined.set(p.provider, (examined.get(p.provider) ?? 0) + 1);
  const open = new Map(payouts.map((p) => [p.id, p]));
  const matchedLines = new Set<bigint>();
  const notes = new Map<bigint, string>();
  /** Credits left unmatched because more than one payout (or credit) fits. */
  const ambiguous = new Set<bigint>();
  const matches: Match[] = [];
  const unsure = (line: bigint, note: string) => {
    ambiguous.add(line);
    notes.set(line, note);
  };

  // Notes say why a line is unmatched as of this matching; earlier ones may no longer hold.
  await q(
    `UPDATE bank_lines SET match_note = NULL WHERE tenant_id = $1 AND matched_at IS NULL AND match_note IS NOT NULL`,
    [tenantId],
  );

  const take = (m: Match) => {
    matches.push(m);
    matchedLines.add(m.lineId);
    for (const p of m.payouts) open.delete(p.id);
    notes.delete(m.lineId);
    ambiguous.delete(m.lineId);
  };
  const stageProviders = (rank: number, rule: MatchRuleName) =>
    [...new Set([...open.values()].map((p) => p.provider))].filter((p) => rulesOf(p).priority[rank] === rule);

  async function byReference(providers: Provider[]) {
    const rows = await q<{
      line: string;
      amount: string;
      text: string;
      payout: string;
      needle: string;
      by: By;
      shown: string;
    }>(
      // Each credit's text is lowered once, not once per payout: 50 payouts against 66,000 credits took 8.8 s the other way.
      // A payout is looked for by our reference and by its bank reference, each held to the same shortest length.
      `WITH credits AS MATERIALIZED (
         SELECT l.id, l.amount, l.currency, lower(l.remittance) AS text FROM bank_lines l
         WHERE l.tenant_id = $1 AND l.amount > 0 AND l.matched_at IS NULL AND NOT l.reversal AND l.remittance <> ''),
       named AS (
         SELECT p.id, p.currency, n.shown, lower(n.shown) AS needle, n.by FROM payouts p
         CROSS JOIN LATERAL (VALUES (p.reference, 'reference'), (p.bank_reference, 'bank reference')) AS n(shown, by)
         WHERE p.tenant_id = $1 AND p.status = 'IN_TRANSIT' AND p.provider::text = ANY($2::text[]) AND length(n.shown) >= $3)
       SELECT c.id::text AS line, c.amount::text AS amount, c.text, n.id::text AS payout, n.needle, n.by, n.shown
       FROM named n JOIN credits c ON c.currency = n.currency AND strpos(c.text, n.needle) > 0
       ORDER BY c.id, n.id, n.by DESC`,
      [tenantId, providers, MIN_REFERENCE_CHARS],
    );
    // Per credit, the payouts it names, each with what of it was found (our reference first).
    const named = new Map<bigint, { amount: bigint; text: string; found: Map<bigint, Named> }>();
    for (const r of rows) {
      const line = BigInt(r.line);
      const payout = open.get(BigInt(r.payout));
      if (!payout || payout.amount === null || matchedLines.has(line)) continue;
      const entry = named.get(line) ?? { amount: BigInt(r.amount), text: r.text, found: new Map() };
      const found = entry.found.get(payout.id) ?? { payout, needles: [] };
      found.needles.push({ needle: r.needle, by: r.by, shown: r.shown });
      entry.found.set(payout.id, found);
      named.set(line, entry);
    }
    // A payout counts when one of its texts is named alone, not only inside another payout's longer one.
    for (const entry of named.values())
      if (entry.found.size > 1) {
        const kept = new Set(
          namedIn(entry.text, [...new Set([...entry.found.values()].flatMap((f) => f.needles.map((n) => n.needle)))]),
        );
        for (const [id, f] of entry.found) {
          f.needles = f.needles.filter((n) => kept.has(n.needle));
          if (!f.needles.length) entry.found.delete(id);
        }
      }
    const fitting: Match[] = [];
    for (const [lineId, { amount, found }] of named) {
      const fs = [...found.values()];
      const ps = fs.map((f) => f.payout);
      const provider = ps[0]!.provider;
      const { toleranceMinor } = rulesOf(provider);
      const byBank = fs.some((f) => f.needles[0]!.by === "bank reference");
      const refs = fs.map(describeNamed).join(", ");
      if (ps.length > 1 && ps.some((p) => p.provider !== provider)) {
        notes.set(lineId, `names payouts of more than one provider (${refs}): left for a person`);
        continue;
      }
      const expected = ps.reduce((s, p) => s + p.amount!, 0n);
      const rule = ps.length === 1 ? "reference" : "reference_sum";
      if (abs(amount - expected) > toleranceMinor) {
        notes.set(
          lineId,
          `names ${refs}, but ${differenceNote(rule, amount, expected, ps[0]!.currency, toleranceMinor).replace(/^[a-z_]+: /, "")}: beyond the tolerance, not matched`,
        );
        continue;
      }
      fitting.push({
        lineId,
        payouts: ps.map(({ id, provider, reference }) => ({ id, provider, reference })),
        outcome: amount === expected ? rule : "within_tolerance",
        // Found by our own reference alone is the plain case, said by the rule; a bank reference is named.
        note:
          amount === expected
            ? ps.length > 1
              ? `sum of ${refs}`
              : byBank
                ? `names ${refs}`
                : null
            : differenceNote(
                ps.length > 1 || byBank ? `${rule} of ${refs}` : rule,
                amount,
                expected,
                ps[0]!.currency,
                toleranceMinor,
              ),
      });
    }
    // A payout named by two credits that both fit is a question for a person, not a match.
    const claims = new Map<bigint, Match[]>();
    for (const m of fitting) for (const p of m.payouts) claims.set(p.id, [...(claims.get(p.id) ?? []), m]);
    for (const m of fitting) {
      const rivals = m.payouts.flatMap((p) => (claims.get(p.id)!.length > 1 ? [p.reference] : []));
      if (rivals.length)
        unsure(
          m.lineId,
          `${rivals.join(", ")} ${rivals.length === 1 ? "is" : "are"} named by more than one credit that fits: left for a person`,
        );
      else take(m);
    }
  }

  async function byAmountAndDate(providers: Provider[]) {
    const rows = await q<{ line: string; amount: string; payout: string }>(
      `SELECT l.id::text AS line, l.amount::text AS amount, p.id::text AS payout
       FROM payouts p
       LEFT JOIN provider_endpoints e ON e.tenant_id = p.tenant_id AND e.provider = p.provider
       JOIN bank_lines l ON l.tenant_id = p.tenant_id AND l.amount > 0 AND l.matched_at IS NULL AND NOT l.reversal
        AND l.currency = p.currency
        AND l.booking_date BETWEEN p.arrival_date AND p.arrival_date + coalesce(e.match_date_lag_days, $3)
        AND abs(l.amount - coalesce(p.their_amount, p.our_amount)) <= coalesce(e.match_tolerance_minor, $4)
       WHERE p.tenant_id = $1 AND p.status = 'IN_TRANSIT' AND p.provider::text = ANY($2::text[])
       ORDER BY l.id, p.id`,
      [tenantId, providers, DEFAULT_RULES.dateLagDays, DEFAULT_RULES.toleranceMinor.toString()],
    );
    type Pair = { line: bigint; amount: bigint; payout: Payout };
    const pairs: Pair[] = rows.flatMap((r) => {
      const payout = open.get(BigInt(r.payout));
      const line = BigInt(r.line);
      return payout && !matchedLines.has(line) ? [{ line, amount: BigInt(r.amount), payout }] : [];
    });
    // Exact amounts first: a payout with one exact credit is not made ambiguous by a near one.
    for (const exact of [true, false]) {
      const live = pairs.filter((p) => open.has(p.payout.id) && !matchedLines.has(p.line));
      const tier = exact ? live.filter((p) => p.amount === p.payout.amount) : live;
      const byPayout = new Map<bigint, Pair[]>();
      const byLine = new Map<bigint, Pair[]>();
      for (const p of tier) {
        byPayout.set(p.payout.id, [...(byPayout.get(p.payout.id) ?? []), p]);
        byLine.set(p.line, [...(byLine.get(p.line) ?? []), p]);
      }
      for (const [, candidates] of byPayout) {
        const pair = candidates[0]!;
        if (candidates.length === 1 && byLine.get(pair.line)!.length === 1) {
          const { toleranceMinor } = rulesOf(pair.payout.provider);
          const { id, provider, reference, currency } = pair.payout;
          take({
            lineId: pair.line,
            payouts: [{ id, provider, reference }],
            outcome: exact ? "amount_date" : "within_tolerance",
            note: exact
              ? null
              : differenceNote("amount_date", pair.amount, pair.payout.amount!, currency, toleranceMinor),
          });
        }
      }
    }
    // What is left with more than one candidate either way is ambiguous: said on each credit.
    const left = pairs.filter((p) => open.has(p.payout.id) && !matchedLines.has(p.line));
    const payoutsOf = new Map<bigint, Payout[]>();
    const linesOf = new Map<bigint, bigint[]>();
    for (const p of left) {
      payoutsOf.set(p.line, [...(payoutsOf.get(p.line) ?? []), p.payout]);
      linesOf.set(p.payout.id, [...(linesOf.get(p.payout.id) ?? []), p.line]);
    }
    // Every pair left has more than one candidate on one side: a unique pair either way was taken above.
    for (const [line, ps] of payoutsOf)
      unsure(
        line,
        ps.length > 1
          ? `fits ${plural(ps.length, "payout")} by amount and date (${ps.map((p) => p.reference).join(", ")}): left for a person`
          : `one of ${plural(linesOf.get(ps[0]!.id)!.length, "credit")} that fit ${ps[0]!.reference} by amount and date: left for a person`,
      );
  }

  async function byAmountAndDateSum(providers: Provider[]) {
    const groups = new Map<string, Payout[]>();
    for (const p of open.values())
      if (providers.includes(p.provider) && p.arrivalDate && p.amount !== null) {
        const key = `${p.provider}|${p.currency}|${p.arrivalDate}`;
        groups.set(key, [...(groups.get(key) ?? []), p]);
      }
    const several = [...groups.entries()].filter(([, ps]) => ps.length > 1);
    if (!several.length) return;
    const spec = several.map(([key, ps]) => {
      const r = rulesOf(ps[0]!.provider);
      return {
        key,
        currency: ps[0]!.currency,
        from: ps[0]!.arrivalDate!,
        lag: r.dateLagDays,
        tol: r.toleranceMinor,
        sum: ps.reduce((s, p) => s + p.amount!, 0n),
      };
    });
    const rows = await q<{ key: string; line: string; amount: string }>(
      `SELECT g.key, l.id::text AS line, l.amount::text AS amount
       FROM unnest($2::text[], $3::text[], $4::date[], $5::int[], $6::bigint[], $7::bigint[]) AS g(key, currency, arrival, lag, tol, total)
       JOIN bank_lines l ON l.tenant_id = $1 AND l.amount > 0 AND l.matched_at IS NULL AND NOT l.reversal AND l.currency = g.currency
        AND l.booking_date BETWEEN g.arrival AND g.arrival + g.lag AND abs(l.amount - g.total) <= g.tol
       ORDER BY l.id`,
      [
        tenantId,
        spec.map((s) => s.key),
        spec.map((s) => s.currency),
        spec.map((s) => s.from),
        spec.map((s) => s.lag),
        spec.map((s) => s.tol.toString()),
        spec.map((s) => s.sum.toString()),
      ],
    );
    const live = rows.filter((r) => !matchedLines.has(BigInt(r.line)));
    const linesOfGroup = new Map<string, { line: bigint; amount: bigint }[]>();
    const groupsOfLine = new Map<bigint, string[]>();
    for (const r of live) {
      const line = BigInt(r.line);
      linesOfGroup.set(r.key, [...(linesOfGroup.get(r.key) ?? []), { line, amount: BigInt(r.amount) }]);
      groupsOfLine.set(line, [...(groupsOfLine.get(line) ?? []), r.key]);
    }
    for (const s of spec) {
      const candidates = linesOfGroup.get(s.key) ?? [];
      const ps = groups.get(s.key)!;
      const refs = ps.map((p) => p.reference).join(", ");
      if (candidates.length === 1 && groupsOfLine.get(candidates[0]!.line)!.length === 1) {
        const { line, amount } = candidates[0]!;
        take({
          lineId: line,
          payouts: ps.map(({ id, provider, reference }) => ({ id, provider, reference })),
          outcome: amount === s.sum ? "amount_date_sum" : "within_tolerance",
          note:
            amount === s.sum
              ? `sum of ${refs} (arrival ${s.from})`
              : differenceNote(`amount_date_sum of ${refs}`, amount, s.sum, s.currency, s.tol),
        });
      } else
        for (const c of candidates)
          unsure(
            c.line,
            candidates.length > 1
              ? `one of ${plural(candidates.length, "credit")} that fit the sum of ${refs}: left for a person`
              : `fits the sum of ${refs} and of other payouts too: left for a person`,
          );
    }
  }

  const ranks = Math.max(0, ...[...open.values()].map((p) => rulesOf(p.provider).priority.length));
  for (let rank = 0; rank < ranks; rank++) {
    for (const rule of ["reference", "amount_date"] as const) {
      const providers = stageProviders(rank, rule);
      if (!providers.length) continue;
      if (rule === "reference") await byReference(providers);
      else {
        await byAmountAndDate(providers);
        await byAmountAndDateSum(providers);
      }
    }
  }

  await recordMatches(q, tenantId, matches);
  if (notes.size)
    await q(
      `UPDATE bank_lines l SET match_note = n.note FROM unnest($2::bigint[], $3::text[]) AS n(id, note)
       WHERE l.tenant_id = $1 AND l.id = n.id AND l.matched_at IS NULL`,
      [tenantId, [...notes.keys()].map(String), [...notes.values()]],
    );

  return afterTheWindow(client, input, { matches, examined, ambiguous: ambiguous.size, rulesOf });
}

async function recordMatches(q: Q, tenantId: string, matches: Match[]): Promise<void> {
  if (!matches.length) return;
  await q(
    `UPDATE bank_lines l SET matched_at = now(), match_rule = m.rule, match_note = m.note
     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS m(id, rule, note)
     WHERE l.tenant_id = $1 AND l.id = m.id AND l.matched_at IS NULL`,
    [tenantId, matches.map((m) => String(m.lineId)), matches.map((m) => m.outcome), matches.map((m) => m.note)],
  );
  const pairs = matches.flatMap((m) => m.payouts.map((p) => [String(p.id), String(m.lineId)] as const));
  // Settled on the day the bank booked the credit: the day the money arrived.
  await q(
    `UPDATE payouts p SET status = 'SETTLED', bank_line_id = m.line, settled_at = l.booking_date::timestamp AT TIME ZONE 'UTC', updated_at = now()
     FROM unnest($2::bigint[], $3::bigint[]) AS m(payout, line) JOIN bank_lines l ON l.id = m.line AND l.tenant_id = $1
     WHERE p.tenant_id = $1 AND p.id = m.payout AND p.status = 'IN_TRANSIT'`,
    [tenantId, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  );
}

type Found = { provider: Provider; reference: string; id: string; inserted: boolean };

/**
 * A bank line as a discrepancy's evidence, in the shape the case page reads for
 * a settlement line (row, format, header, line: the line as text), with the bank
 * line's own fields beside it.
 */
function creditEvidence(line: Record<string, unknown>): Record<string, unknown> {
  const currency = String(line.currency).trim();
  const text = [
    String(line.bookingDate).slice(0, 10),
    `${toDecimalText(BigInt(String(line.amount)), currency)} ${currency}`,
    line.counterparty,
    line.remittance,
    line.entryRef ? `ref ${line.entryRef}` : null,
    `account ${line.account}`,
  ]
    .filter(Boolean)
    .join(" · ");
  return { ...line, currency, header: null, line: text };
}

async function afterTheWindow(
  client: PoolClient,
  input: MatchInput,
  state: {
    matches: Match[];
    examined: Map<Provider, number>;
    ambiguous: number;
    rulesOf: (p: Provider) => Rules;
  },
): Promise<MatchSummary> {
  const { tenantId } = input;
  const q: Q = async (sql, params = []) => (await client.query(sql, params)).rows;
  const coveredTo =
    (
      await q<{ to: string | null }>(`SELECT max(to_date)::text AS to FROM bank_statements WHERE tenant_id = $1`, [
        tenantId,
      ])
    )[0]?.to ?? null;

  // Due: in transit, and the statements cover the last day the credit could have been booked.
  const duePayouts = coveredTo
    ? await q<{
        id: string;
        provider: Provider;
        reference: string;
        amount: string | null;
        currency: string;
        arrival: string;
        last: string;
      }>(
        `SELECT p.id::text, p.provider::text AS provider, p.reference, coalesce(p.their_amount, p.our_amount)::text AS amount, p.currency,
                p.arrival_date::text AS arrival, (p.arrival_date + coalesce(e.match_date_lag_days, $3))::text AS last
         FROM payouts p LEFT JOIN provider_endpoints e ON e.tenant_id = p.tenant_id AND e.provider = p.provider
         WHERE p.tenant_id = $1 AND p.status = 'IN_TRANSIT' AND p.arrival_date IS NOT NULL
           AND p.arrival_date + coalesce(e.match_date_lag_days, $3) <= $2::date`,
        [tenantId, coveredTo, DEFAULT_RULES.dateLagDays],
      )
    : [];
  const names = PROVIDER_NAMES.map((n) => n.name);
  const dueCredits = coveredTo
    ? await q<{
        id: string;
        provider: Provider;
        reference: string;
        amount: string;
        currency: string;
        day: string;
        line: Record<string, unknown>;
      }>(
        `WITH named AS (
           SELECT l.*, (SELECT n.provider FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS n(name, provider, o)
                        WHERE strpos(lower(l.remittance || ' ' || coalesce(l.counterparty, '')), n.name) > 0 ORDER BY n.o LIMIT 1) AS provider
           FROM bank_lines l WHERE l.tenant_id = $1 AND l.amount > 0 AND l.matched_at IS NULL AND NOT l.reversal)
         SELECT l.id::text, l.provider,
           -- The bank's reference names the discrepancy unless two lines share it; once named, a line keeps its discrepancy.
           coalesce(
             (SELECT d.reference FROM recon_discrepancies d WHERE d.tenant_id = l.tenant_id AND d.bucket = 'BANK_UNMATCHED' AND d.their_line->>'bankLineId' = l.id::text LIMIT 1),
             CASE WHEN l.entry_ref IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM bank_lines o WHERE o.tenant_id = l.tenant_id AND o.entry_ref = l.entry_ref AND o.id <> l.id)
                  THEN l.entry_ref ELSE 'bank:' || l.statement_id || ':' || l.row_no END) AS reference,
           l.amount::text, l.currency, l.booking_date::text AS day,
           jsonb_build_object('bankLineId', l.id::text, 'statementId', l.statement_id::text, 'row', l.row_no, 'account', l.account,
             'entryRef', l.entry_ref, 'bookingDate', l.booking_date, 'valueDate', l.value_date, 'amount', l.amount::text,
             'currency', l.currency, 'remittance', l.remittance, 'counterparty', l.counterparty, 'format', s.format) AS line
         FROM named l JOIN bank_statements s ON s.id = l.statement_id
         LEFT JOIN provider_endpoints e ON e.tenant_id = l.tenant_id AND e.provider::text = l.provider
         WHERE l.provider IS NOT NULL AND l.booking_date + coalesce(e.match_date_lag_days, $5) <= $2::date
         ORDER BY l.id`,
        [tenantId, coveredTo, names, PROVIDER_NAMES.map((n) => n.provider), DEFAULT_RULES.dateLagDays],
      )
    : [];

  // The runs: one per provider this import concerned (payouts examined, found, or resolved).
  const matchedByProvider = new Map<Provider, Match[]>();
  for (const m of state.matches) {
    const p = m.payouts[0]!.provider;
    matchedByProvider.set(p, [...(matchedByProvider.get(p) ?? []), m]);
  }
  const resolvable = await q<{ id: string; provider: Provider }>(
    `SELECT d.id::text, d.provider::text AS provider FROM recon_discrepancies d
     WHERE d.tenant_id = $1 AND d.bucket = 'BANK_UNMATCHED' AND d.state <> 'RESOLVED'
       AND ((d.provider::text, d.reference) IN (SELECT u.provider, u.reference FROM unnest($2::text[], $3::text[]) AS u(provider, reference))
            OR d.their_line->>'bankLineId' = ANY($4::text[]))`,
    [
      tenantId,
      state.matches.flatMap((m) => m.payouts.map((p) => p.provider)),
      state.matches.flatMap((m) => m.payouts.map((p) => p.reference)),
      state.matches.map((m) => String(m.lineId)),
    ],
  );
  const providers = new Set<Provider>([
    ...state.examined.keys(),
    ...duePayouts.map((p) => p.provider),
    ...dueCredits.map((c) => c.provider),
    ...resolvable.map((d) => d.provider),
  ]);
  const runs = new Map<Provider, bigint>();
  const span = input.statement
    ? { from: input.statement.from, to: input.statement.to }
    : (
        await q<{ from: string | null; to: string | null }>(
          `SELECT min(from_date)::text AS from, max(to_date)::text AS to FROM bank_statements WHERE tenant_id = $1`,
          [tenantId],
        )
      )[0]!;
  const from = span.from ?? span.to ?? new Date().toISOString().slice(0, 10);
  const to = span.to ?? from;
  for (const provider of [...providers].sort()) {
    const r = state.rulesOf(provider);
    const [run] = await q<{ id: string }>(
      `INSERT INTO recon_runs (tenant_id, provider, window_from, window_to, source, source_name, actor_type, actor_label, started_at, rules)
       VALUES ($1, $2::"Provider", $3::date::timestamp AT TIME ZONE 'UTC', ($4::date + 1)::timestamp AT TIME ZONE 'UTC', 'BANK', $5, $6::"ActorType", $7, $8, $9::jsonb) RETURNING id::text`,
      [
        tenantId,
        provider,
        from,
        to,
        input.statement
          ? `bank statement #${input.statement.id} (${input.statement.sourceName})`
          : "re-match: payouts posted or changed since the last matching",
        input.actor.type,
        input.actor.label,
        input.startedAt,
        JSON.stringify({
          toleranceMinor: r.toleranceMinor.toString(),
          dateLagDays: r.dateLagDays,
          priority: r.priority,
        }),
      ],
    );
    runs.set(provider, BigInt(run!.id));
  }
  const runOf = (p: Provider) => String(runs.get(p)!);

  // Resolved: what an earlier import flagged and this one matched.
  const closed = await resolveMatched(client, tenantId, resolvable, runOf, state.matches);

  const found: Found[] = [];
  if (duePayouts.length)
    found.push(
      ...(await q<Found>(
        `WITH up AS (
           INSERT INTO recon_discrepancies AS d (tenant_id, provider, reference, bucket, cause, day, our_amount, our_currency, note, first_run_id, last_run_id)
           SELECT $1, u.provider::"Provider", u.reference, 'BANK_UNMATCHED', 'BANK', u.day, u.amount, u.currency, u.note, u.run, u.run
           FROM unnest($2::text[], $3::text[], $4::date[], $5::bigint[], $6::text[], $7::text[], $8::bigint[]) AS u(provider, reference, day, amount, currency, note, run)
           ON CONFLICT (tenant_id, provider, reference, bucket) DO UPDATE SET last_run_id = EXCLUDED.last_run_id, note = EXCLUDED.note,
             our_amount = EXCLUDED.our_amount, our_currency = EXCLUDED.our_currency
           RETURNING d.id::text, d.provider::text AS provider, d.reference, (xmax = 0) AS inserted)
         SELECT * FROM up`,
        [
          tenantId,
          duePayouts.map((p) => p.provider),
          duePayouts.map((p) => p.reference),
          duePayouts.map((p) => p.arrival),
          duePayouts.map((p) => p.amount),
          duePayouts.map((p) => p.currency),
          duePayouts.map(
            (p) =>
              `payout ${p.reference} was due at the bank by ${p.last} (arrival ${p.arrival} + the endpoint's lag); the statements cover up to ${coveredTo} and no credit matches it`,
          ),
          duePayouts.map((p) => runOf(p.provider)),
        ],
      )),
    );
  if (dueCredits.length)
    found.push(
      ...(await q<Found>(
        `WITH up AS (
           INSERT INTO recon_discrepancies AS d (tenant_id, provider, reference, bucket, cause, day, their_amount, their_currency, their_line, note, first_run_id, last_run_id)
           SELECT $1, u.provider::"Provider", u.reference, 'BANK_UNMATCHED', 'BANK', u.day, u.amount, u.currency, u.line, u.note, u.run, u.run
           FROM unnest($2::text[], $3::text[], $4::date[], $5::bigint[], $6::text[], $7::jsonb[], $8::text[], $9::bigint[]) AS u(provider, reference, day, amount, currency, line, note, run)
           ON CONFLICT (tenant_id, provider, reference, bucket) DO UPDATE SET last_run_id = EXCLUDED.last_run_id, note = EXCLUDED.note,
             their_line = EXCLUDED.their_line
           RETURNING d.id::text, d.provider::text AS provider, d.reference, (xmax = 0) AS inserted)
         SELECT * FROM up`,
        [
          tenantId,
          dueCredits.map((c) => c.provider),
          dueCredits.map((c) => c.reference),
          dueCredits.map((c) => c.day),
          dueCredits.map((c) => c.amount),
          dueCredits.map((c) => c.currency.trim()),
          dueCredits.map((c) => JSON.stringify(creditEvidence(c.line))),
          dueCredits.map(
            (c) =>
              `a credit of ${c.currency.trim()} ${c.amount} (minor units) booked ${c.day} names ${c.provider}, and no payout of it explains the credit; the statements cover up to ${coveredTo}`,
          ),
          dueCredits.map((c) => runOf(c.provider)),
        ],
      )),
    );
  const foundIds = found.map((f) => f.id);
  if (found.length)
    await q(
      `INSERT INTO recon_run_items (run_id, discrepancy_id) SELECT u.run, u.id FROM unnest($1::bigint[], $2::bigint[]) AS u(id, run) ON CONFLICT DO NOTHING`,
      [foundIds, found.map((f) => runOf(f.provider))],
    );
  const opened = found.length
    ? await q<{ id: string }>(
        `INSERT INTO cases (tenant_id, discrepancy_id, kind)
         SELECT d.tenant_id, d.id, 'BANK_UNMATCHED' FROM recon_discrepancies d WHERE d.id = ANY($1::bigint[]) AND d.state <> 'RESOLVED'
         ON CONFLICT (discrepancy_id) DO NOTHING RETURNING id::text`,
        [foundIds],
      )
    : [];
  // A case parked as "timing" before this import and still unmatched by it is a case again.
  const reopened =
    found.length && input.statement
      ? await q<{ id: string; discrepancy_id: string; provider: Provider }>(
          `UPDATE cases c SET status = 'OPEN', waiting_since = NULL, resolution = NULL
         FROM recon_discrepancies d WHERE d.id = c.discrepancy_id AND c.discrepancy_id = ANY($1::bigint[]) AND c.status = 'WAITING' AND c.waiting_since < $2
         RETURNING c.id::text, c.discrepancy_id::text, d.provider::text AS provider`,
          [foundIds, input.startedAt],
        )
      : [];
  for (const c of reopened)
    await audit(
      q,
      tenantId,
      "case.reopen",
      c.id,
      `timing re-check: bank import run ${runOf(c.provider)} still finds no match`,
      {
        discrepancyId: c.discrepancy_id,
        runId: runOf(c.provider),
      },
    );

  const count = <T extends { provider: Provider }>(rows: T[], p: Provider) =>
    rows.filter((r) => r.provider === p).length;
  for (const [provider, runId] of runs) {
    const ms = matchedByProvider.get(provider) ?? [];
    const matchedPayouts = ms.reduce((s, m) => s + m.payouts.length, 0);
    await q(
      `UPDATE recon_runs SET status = 'DONE', finished_at = now(), duration_ms = $2, compared = $3, matched = $4, payouts = $3,
         within_tolerance = $5, ours_not_theirs = $6, theirs_not_ours = $7 WHERE id = $1`,
      [
        String(runId),
        Date.now() - input.startedAt.getTime(),
        state.examined.get(provider) ?? 0,
        matchedPayouts,
        ms.filter((m) => m.outcome === "within_tolerance").reduce((s, m) => s + m.payouts.length, 0),
        count(duePayouts, provider),
        count(dueCredits, provider),
      ],
    );
  }
  return {
    matchedPayouts: state.matches.reduce((s, m) => s + m.payouts.length, 0),
    matchedCredits: state.matches.length,
    withinTolerance: state.matches.filter((m) => m.outcome === "within_tolerance").length,
    unmatchedPayouts: duePayouts.length,
    unmatchedCredits: dueCredits.length,
    ambiguous: state.ambiguous,
    casesOpened: opened.length,
    casesClosed: closed,
    casesReopened: reopened.length,
    coveredTo,
    runs: [...runs].map(([provider, runId]) => ({ provider, runId })),
    matches: state.matches,
  };
}

/** Resolves the discrepancies the matches answer and closes their cases, each close audited. */
async function resolveMatched(
  client: PoolClient,
  tenantId: string,
  resolvable: { id: string; provider: Provider }[],
  runOf: (p: Provider) => string,
  matches: Match[],
): Promise<number> {
  if (!resolvable.length) return 0;
  const q: Q = async (sql, params = []) => (await client.query(sql, params)).rows;
  const ids = resolvable.map((d) => d.id);
  const runs = resolvable.map((d) => runOf(d.provider));
  const lineOfPayout = new Map(
    matches.flatMap((m) => m.payouts.map((p) => [`${p.provider}|${p.reference}`, m] as const)),
  );
  const resolved = await q<{ id: string; provider: Provider; reference: string; line: string | null }>(
    `UPDATE recon_discrepancies d SET state = 'RESOLVED', resolved_at = now(), last_run_id = u.run
     FROM unnest($2::bigint[], $3::bigint[]) AS u(id, run)
     WHERE d.tenant_id = $1 AND d.id = u.id RETURNING d.id::text, d.provider::text AS provider, d.reference, d.their_line->>'bankLineId' AS line`,
    [tenantId, ids, runs],
  );
  const notes = resolved.map((d) => {
    const m = d.line
      ? matches.find((x) => String(x.lineId) === d.line)
      : lineOfPayout.get(`${d.provider}|${d.reference}`);
    const what = m
      ? `bank line #${m.lineId} (${m.outcome}${m.payouts.length > 1 ? `, with ${m.payouts.map((p) => p.reference).join(", ")}` : `, payout ${m.payouts[0]!.reference}`})`
      : "a bank line";
    return `matched to ${what} by bank import run ${runOf(d.provider)}`;
  });
  await q(
    `UPDATE recon_discrepancies d SET note = u.note FROM unnest($1::bigint[], $2::text[]) AS u(id, note) WHERE d.id = u.id`,
    [resolved.map((d) => d.id), notes],
  );
  await q(
    `INSERT INTO recon_run_items (run_id, discrepancy_id) SELECT u.run, u.id FROM unnest($1::bigint[], $2::bigint[]) AS u(id, run) ON CONFLICT DO NOTHING`,
    [ids, runs],
  );
  // One close per provider: each provider's discrepancies were examined by that provider's run.
  let closed = 0;
  for (const provider of new Set(resolvable.map((d) => d.provider))) {
    const runId = runOf(provider);
    const ofProvider = resolvable.filter((d) => d.provider === provider).map((d) => d.id);
    closed += (
      await closeCasesOfResolved(client, tenantId, ofProvider, BigInt(runId), {
        resolution: `matched at the bank by bank import run ${runId}`,
        reason: `the bank credited it: matched by bank import run ${runId}`,
      })
    ).length;
  }
  return closed;
}

async function audit(
  q: Q,
  tenantId: string,
  action: string,
  caseId: string,
  reason: string,
  details: Record<string, unknown>,
) {
  await q(
    `INSERT INTO audit_log (actor_type, actor_label, tenant_id, action, subject_type, subject_id, reason, details) VALUES ('SYSTEM', $1, $2, $3, 'case', $4, $5, $6)`,
    [SYSTEM_ACTOR.label, tenantId, action, caseId, reason, JSON.stringify(details)],
  );
}
