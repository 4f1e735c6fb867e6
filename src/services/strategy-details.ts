import type { AccountSummary } from "../core/account.js";
import { type Decimal, decimal, sub } from "../core/decimal.js";
import { type StrategyStatistics, strategyStatistics, type TradeSummary } from "../core/statistics.js";
import { SECURITY_TYPES, type SecurityType, type SymbolType } from "../core/symbols/instrument.js";
import type { Storage } from "../store/storage.js";
import type { viewableStrategy } from "./closed-trades.js";
import { equitySeries } from "./equity.js";
import type { RequestContext } from "./runtime.js";
import { modelAccount, type TradingRuntime, tradingVersion } from "./trading.js";

/**
 * GetStrategyDetails: a strategy's description, its model account now, and
 * every statistic of its record (src/core/statistics.ts, docs/statistics.md)
 * from its daily marks and closed trades under the model account's own
 * commissions.
 */
export interface StrategyDetails {
  readonly strategy: Awaited<ReturnType<typeof viewableStrategy>>;
  readonly ownerName: string;
  readonly account: AccountSummary;
  readonly statistics: StrategyStatistics;
  /** The kinds of instrument the strategy's fills were in, the most traded first. */
  readonly primarySecurityTypes: readonly SecurityType[];
}

/** What a strategy's fills and closed trades say, which changes only when it trades. */
interface TradingRecord {
  readonly closed: readonly TradeSummary[];
  readonly latestFillAtMs: number | null;
  readonly primarySecurityTypes: readonly SecurityType[];
}

/**
 * Trading records by storage, strategy and trading version: a strategy's version counts
 * its trading transactions (in storage, so every process sees a change), and a
 * record is reused only at the version it was read at.
 */
const recordsByStorage = new WeakMap<
  Storage,
  Map<number, { readonly version: number; readonly record: TradingRecord }>
>();
const RECORDS_KEPT = 200;

async function tradingRecord(ctx: RequestContext, strategyId: number, version: number): Promise<TradingRecord> {
  let records = recordsByStorage.get(ctx.storage);
  if (!records) {
    records = new Map();
    recordsByStorage.set(ctx.storage, records);
  }
  const kept = records.get(strategyId);
  if (kept?.version === version) return kept.record;
  const db = ctx.storage.db;
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
  const record: TradingRecord = {
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
  if (records.size >= RECORDS_KEPT) records.delete(records.keys().next().value as number);
  records.set(strategyId, { version, record });
  return record;
}

export async function strategyDetails(
  ctx: RequestContext & TradingRuntime,
  strategyId: number,
): Promise<StrategyDetails> {
  const series = await equitySeries(ctx, strategyId, "Default");
  const { strategy } = series;
  const db = ctx.storage.db;
  const [owner, account] = await Promise.all([
    db
      .selectFrom("persons")
      .select(["alias", "first_name", "last_name"])
      .where("id", "=", strategy.owner_person_id)
      .executeTakeFirst(),
    modelAccount(ctx, strategyId),
  ]);
  const record = await tradingRecord(ctx, strategyId, await tradingVersion(ctx, strategyId));
  const nowMs = ctx.clock.nowMs();
  const startingCash: Decimal = decimal(strategy.starting_capital);
  const statistics = strategyStatistics({
    startingCash,
    createdAtMs: strategy.created_at,
    nowMs,
    marks: series.marks,
    closedTrades: record.closed,
    latestTradeAtMs: record.latestFillAtMs,
  });
  const ownerName = owner ? (owner.alias ?? `${owner.first_name} ${owner.last_name.slice(0, 1)}.`) : "";
  return { strategy, ownerName, account, statistics, primarySecurityTypes: record.primarySecurityTypes };
}
