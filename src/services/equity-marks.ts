import { exposureOf, markPositions, summarize } from "../core/account.js";
import { add, decimal, div, formatDecimal, fromInteger, ZERO } from "../core/decimal.js";
import { checkMark } from "../core/marks.js";
import type { Position } from "../core/positions.js";
import { currentOrNextSession, US_EQUITIES } from "../core/sessions.js";
import { fromServiceSymbol, type Instrument } from "../core/symbols/instrument.js";
import { marketViewAt } from "../engine/market-view.js";
import { readSetting, writeSetting } from "../store/settings.js";
import { instrumentOf } from "../store/trading-state.js";
import { withTransaction } from "../store/transaction.js";
import { noteMarksWritten } from "./record-version.js";
import { dbOf } from "./runtime.js";
import type { TradingRuntime } from "./trading.js";

/**
 * Daily equity marks: at every NYSE close (16:00 New York, 13:00 on early
 * closes) each live strategy's model account is marked to the quotes of that
 * moment and stored with the S&P 500 proxy's price (SPY). The fill loop calls
 * this as the clock passes closes; a clock that jumps over several closes
 * marks each of them, at the quotes of its time, with the positions held then
 * (nothing trades while the clock jumps).
 */
export const BENCHMARK = fromServiceSymbol("SPY", "stock") as Instrument;
const MARKED_THROUGH = "equity_marked_through";

/** The NYSE closes after `afterMs` up to and including `throughMs`, oldest first. */
export function closesBetween(afterMs: number, throughMs: number): number[] {
  const closes: number[] = [];
  let at = afterMs;
  for (;;) {
    const session = currentOrNextSession(US_EQUITIES, at);
    if (session.closesAtMs > throughMs) return closes;
    if (session.closesAtMs > afterMs) closes.push(session.closesAtMs);
    at = session.closesAtMs;
  }
}

/** Marks a transaction writes at most: a long catch-up commits in short steps, never holding storage for long. */
const MARKS_PER_TRANSACTION = 2_000;

/**
 * Marks every close the clock has passed since the last one marked. The first
 * call only notes the time (no marks for the past); a clock set back (sandbox)
 * starts over from there, keeping the marks already made.
 *
 * Nothing trades while the clock passes these closes, so the accounts as they
 * stand now are the accounts at each of them: they are read once, and the
 * marks are written in short transactions, each moving the marked-through
 * time, with a turn of the event loop between them, so requests go on while
 * years of closes are marked (a sandbox jump, a start after downtime).
 */
export async function markClosesThrough(runtime: TradingRuntime, nowMs: number): Promise<number> {
  const stored = await readSetting(dbOf(runtime), MARKED_THROUGH);
  const through = stored === undefined ? null : Number(stored);
  if (through === null || nowMs < through) {
    await writeSetting(dbOf(runtime), MARKED_THROUGH, String(nowMs));
    return 0;
  }
  const closes = closesBetween(through, nowMs);
  const last = closes.at(-1);
  if (last === undefined) return 0;
  const { strategies, held } = await accountsNow(runtime, last);
  let first = 0;
  while (first < closes.length) {
    const step: number[] = [];
    let rows = 0;
    for (; first < closes.length && (step.length === 0 || rows < MARKS_PER_TRANSACTION); first++) {
      step.push(closes[first] as number);
      rows += strategies.length;
    }
    await markCloses(runtime, step, strategies, held);
    if (first < closes.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return closes.length;
}

type MarkedStrategy = Awaited<ReturnType<typeof accountsNow>>["strategies"][number];
type Holdings = ReadonlyMap<number, readonly { instrument: Instrument; position: Position }[]>;

/** The live strategies created before `beforeMs`, with their model accounts' cash and positions as committed. */
async function accountsNow(runtime: TradingRuntime, beforeMs: number) {
  const db = dbOf(runtime);
  const strategies = await db
    .selectFrom("strategies as s")
    .innerJoin("accounts as a", "a.strategy_id", "s.id")
    .select(["s.id", "a.cash", "a.commissions_paid", "a.plan_commissions", "s.created_at"])
    .where("s.is_alive", "=", 1)
    .where("a.kind", "=", "model")
    .where("s.created_at", "<", beforeMs)
    .execute();
  const positions =
    strategies.length === 0
      ? []
      : await db
          .selectFrom("positions as p")
          .innerJoin("accounts as a", "a.id", "p.account_id")
          .selectAll("p")
          .where("a.kind", "=", "model")
          .execute();
  const held = new Map<number, { instrument: Instrument; position: Position }[]>();
  for (const p of positions) {
    held.set(p.strategy_id, [
      ...(held.get(p.strategy_id) ?? []),
      {
        instrument: instrumentOf(p.symbol, p.symbol_type),
        position: { quantity: decimal(p.quantity), cost: decimal(p.cost) },
      },
    ]);
  }
  return { strategies, held };
}

/** The marks of the closes, in one transaction that also moves the marked-through time to the last of them. */
async function markCloses(
  runtime: TradingRuntime,
  closes: readonly number[],
  strategies: readonly MarkedStrategy[],
  held: Holdings,
): Promise<void> {
  const rows = closes.flatMap((close) => marksAt(runtime, close, strategies, held));
  // Checked here, once: readers trust the stored marks (src/core/marks.ts).
  for (const row of rows) checkMark(row);
  await withTransaction(runtime, async ({ tx }) => {
    for (let i = 0; i < rows.length; i += 500) {
      await tx
        .insertInto("equity_marks")
        .values(rows.slice(i, i + 500))
        .onConflict((c) => c.columns(["strategy_id", "day"]).doNothing())
        .execute();
    }
    await writeSetting(tx, MARKED_THROUGH, String(closes.at(-1)));
    if (rows.length > 0) await noteMarksWritten(tx);
  });
}

/** The marks of one close: every strategy created before it, at the quotes of that moment. */
function marksAt(runtime: TradingRuntime, closeMs: number, strategies: readonly MarkedStrategy[], held: Holdings) {
  const view = marketViewAt(runtime.market, closeMs);
  const benchmarkQuote = view.quote(BENCHMARK);
  const benchmark = benchmarkQuote ? div(add(benchmarkQuote.bid, benchmarkQuote.ask), fromInteger(2)) : ZERO;
  const day = currentOrNextSession(US_EQUITIES, closeMs - 1).tradingDay;
  const dayText = `${day.year}-${String(day.month).padStart(2, "0")}-${String(day.day).padStart(2, "0")}`;
  return strategies
    .filter((strategy) => strategy.created_at < closeMs)
    .map((strategy) => {
      const marked = markPositions(held.get(strategy.id) ?? [], view);
      const account = summarize(decimal(strategy.cash), marked);
      return {
        strategy_id: strategy.id,
        day: dayText,
        marked_at: closeMs,
        equity: formatDecimal(account.equity),
        cash: strategy.cash,
        exposure: formatDecimal(exposureOf(marked)),
        commissions_paid: strategy.commissions_paid,
        plan_commissions: strategy.plan_commissions,
        benchmark: formatDecimal(benchmark),
      };
    });
}
