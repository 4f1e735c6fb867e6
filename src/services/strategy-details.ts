import type { AccountSummary } from "../core/account.js";
import { centsToDecimal, decimal, sub } from "../core/decimal.js";
import {
  ageInDays,
  type StrategyStatistics,
  strategyStatistics,
  type TradeSummary,
  type TradeTotals,
} from "../core/statistics.js";
import { SECURITY_TYPES, type SecurityType, type SymbolType } from "../core/symbols/instrument.js";
import { keyedReads } from "../store/keyed-reads.js";
import { strategyRecordTotals } from "../store/strategy-records.js";
import type { Tx } from "../store/transaction.js";
import { type AutotradeFigures, strategyAutotradeFigures } from "./autotrade-aum.js";
import { viewableStrategy } from "./closed-trades.js";
import { planSeries } from "./equity.js";
import { cachedRecord } from "./record-cache.js";
import { type RecordVersion, recordVersion } from "./record-version.js";
import { dbOf, type RequestContext, type Runtime } from "./runtime.js";
import { MODEL_ACCOUNT_PLAN, modelAccount, type TradingRuntime } from "./trading.js";

/**
 * GetStrategyDetails: a strategy's description, its model account now, and
 * every statistic of its record (src/core/statistics.ts, docs/statistics.md)
 * from its daily marks and closed trades under the model account's own
 * commissions.
 *
 * The statistics change only when the strategy trades or a mark is written:
 * they are kept per strategy at its record version (record-cache.ts). The
 * description, the owner's name and the model account marked at the quotes
 * of now are read at every request, after the access rules.
 */
export interface StrategyDetails {
  readonly strategy: Awaited<ReturnType<typeof viewableStrategy>>;
  readonly ownerName: string;
  readonly account: AccountSummary;
  /** Every statistic now: the record's, with its age counted to now. */
  readonly statistics: StrategyStatistics;
  /** The same object as long as the record's version holds, so what is made from it can be kept with it. */
  readonly record: StrategyRecord;
  /** The accounts autotrading it now (AUM) and whether its owner is one of them; read at every request. */
  readonly autotrade: AutotradeFigures;
}

/** What the record says at one version; its age, which grows with the clock, is left out. */
export interface StrategyRecord {
  readonly statistics: Omit<StrategyStatistics, "ageInDays">;
  /** The kinds of instrument the strategy's fills were in, the most traded first. */
  readonly primarySecurityTypes: readonly SecurityType[];
}

/** What a strategy's fills and closed trades say, which changes only when it trades. */
interface TradingRecord {
  readonly closed: readonly TradeSummary[] | TradeTotals;
  readonly latestFillAtMs: number | null;
  readonly primarySecurityTypes: readonly SecurityType[];
}

function tradingRecord(runtime: Runtime, strategyId: number, version: RecordVersion): Promise<TradingRecord> {
  return cachedRecord(
    runtime,
    `trades:${strategyId}`,
    String(version.trading),
    () => readTradingRecord(runtime, strategyId),
    () => 1,
  );
}

/**
 * The record's totals as the records consumer of the outbox keeps them (one
 * row), when it has read every event of the strategy's model account; else,
 * just after a trade it has not read yet (or that another process made), as
 * the fills and trades stored say.
 */
async function readTradingRecord(runtime: Runtime, strategyId: number): Promise<TradingRecord> {
  const totals = await strategyRecordTotals(dbOf(runtime), strategyId);
  if (totals) {
    const kinds = (["stock", "option", "future", "forex"] as const)
      .map((kind) => ({ kind, fills: totals[`fills_${kind}`] }))
      .filter((kind) => kind.fills > 0)
      .sort((a, b) => b.fills - a.fills);
    return {
      closed: {
        numTrades: totals.closed_trades,
        numWinners: totals.winners,
        numLosers: totals.losers,
        sumDollarWinners: centsToDecimal(totals.sum_winners_cents),
        sumDollarLosers: centsToDecimal(totals.sum_losers_cents),
        durationMs: totals.duration_ms,
      },
      latestFillAtMs: totals.latest_fill_at,
      primarySecurityTypes: kinds.map((kind) => SECURITY_TYPES[kind.kind]),
    };
  }
  const db = dbOf(runtime);
  const [trades, fillKinds] = await Promise.all([
    db
      .selectFrom("trades")
      .select(["opened_at", "closed_at", "realized", "commission"])
      .where("strategy_id", "=", strategyId)
      .where("closed_at", "is not", null)
      .orderBy("closed_at")
      .execute(),
    db
      .selectFrom("fills")
      .select([
        "symbol_type",
        (eb) => eb.fn.countAll<number>().as("fills"),
        (eb) => eb.fn.max("filled_at").as("latest"),
      ])
      .where("strategy_id", "=", strategyId)
      .groupBy("symbol_type")
      .execute(),
  ]);
  return {
    closed: trades.map((trade) => ({
      openedAtMs: trade.opened_at,
      closedAtMs: trade.closed_at as number,
      profit: sub(decimal(trade.realized), decimal(trade.commission)),
    })),
    latestFillAtMs: fillKinds.reduce<number | null>((max, kind) => {
      const at = kind.latest === null ? null : Number(kind.latest);
      return at !== null && (max === null || at > max) ? at : max;
    }, null),
    primarySecurityTypes: [...fillKinds]
      .sort((a, b) => Number(b.fills) - Number(a.fills))
      .map((kind) => SECURITY_TYPES[kind.symbol_type as SymbolType]),
  };
}

type Strategy = StrategyDetails["strategy"];

/**
 * The record's statistics at a version, kept with the starting capital they
 * were computed from (the base of every return, which may change until the
 * strategy trades).
 */
function strategyRecord(ctx: RequestContext, strategy: Strategy, version: RecordVersion): Promise<StrategyRecord> {
  return cachedRecord(
    ctx,
    `details:${strategy.id}`,
    `${version.trading}:${version.marks}:${strategy.starting_capital}`,
    async () => {
      const [series, trading] = await Promise.all([
        planSeries(ctx, strategy.id, MODEL_ACCOUNT_PLAN, version.marks),
        tradingRecord(ctx, strategy.id, version),
      ]);
      const { ageInDays: _, ...statistics } = strategyStatistics({
        startingCash: decimal(strategy.starting_capital),
        createdAtMs: strategy.created_at,
        nowMs: ctx.clock.nowMs(),
        marks: series.marks,
        closedTrades: trading.closed,
        latestTradeAtMs: trading.latestFillAtMs,
      });
      return { statistics, primarySecurityTypes: trading.primarySecurityTypes };
    },
    // The statistics are a few dozen numbers; what they were computed from is weighed where it is kept.
    () => 1,
  );
}

/** Owners as records show them: their alias, else their first name and initial. */
async function ownerNames(db: Tx, personIds: readonly number[]): Promise<Map<number, string>> {
  const rows = await db
    .selectFrom("persons")
    .select(["id", "alias", "first_name", "last_name"])
    .where("id", "in", [...personIds])
    .execute();
  return new Map(rows.map((row) => [row.id, row.alias ?? `${row.first_name} ${row.last_name.slice(0, 1)}.`]));
}

export async function strategyDetails(
  ctx: RequestContext & TradingRuntime,
  strategyId: number,
): Promise<StrategyDetails> {
  // Read side by side (one round trip less on PostgreSQL); nothing kept is read before access is granted.
  const [strategy, version] = await Promise.all([viewableStrategy(ctx, strategyId), recordVersion(ctx, strategyId)]);
  const [owner, record, account, autotrade] = await Promise.all([
    keyedReads(ctx.storage, ownerNames).read(dbOf(ctx), strategy.owner_person_id),
    strategyRecord(ctx, strategy, version),
    modelAccount(ctx, strategyId),
    strategyAutotradeFigures(ctx, strategyId),
  ]);
  const ownerName = owner ?? "";
  return {
    strategy,
    ownerName,
    account,
    statistics: { ...record.statistics, ageInDays: ageInDays(strategy.created_at, ctx.clock.nowMs()) },
    record,
    autotrade,
  };
}
