import { decimal } from "../core/decimal.js";
import { type OrderStatus, WORKING } from "../core/orders/status.js";
import { averagePrice } from "../core/positions.js";
import type { StrategyOrders } from "../engine/order-index.js";
import { instrumentOf, LIVE_STATUSES } from "./trading-state.js";
import type { Tx } from "./transaction.js";

/**
 * The live orders, due times and open trades of the strategies' model
 * accounts (all of them when no ids are given) as stored: the fill loop
 * rebuilds its index from this at start, and reads a strategy another
 * process changed.
 */
export async function storedLiveOrders(db: Tx, strategyIds?: readonly number[]): Promise<StrategyOrders[]> {
  let query = db
    .selectFrom("orders as o")
    .innerJoin("accounts as a", "a.id", "o.account_id")
    .select([
      "o.id",
      "o.strategy_id",
      "o.symbol",
      "o.symbol_type",
      "o.side",
      "o.order_type",
      "o.limit_price",
      "o.stop_price",
      "o.status",
      "o.parked_until",
      "o.expires_at",
      "a.version",
    ])
    .where("o.status", "in", LIVE_STATUSES)
    .where("a.kind", "=", "model");
  if (strategyIds) query = query.where("a.strategy_id", "in", [...strategyIds]);
  const rows = await query.orderBy("o.strategy_id").orderBy("o.id").execute();
  let held = db
    .selectFrom("positions as p")
    .innerJoin("accounts as a", "a.id", "p.account_id")
    .leftJoin("trades as t", "t.id", "p.trade_id")
    .select(["p.strategy_id", "p.symbol", "p.quantity", "p.cost", "t.side", "t.mae_worst_price", "a.version"])
    .where("a.kind", "=", "model");
  if (strategyIds) held = held.where("a.strategy_id", "in", [...strategyIds]);
  const positions = await held.execute();
  type Entry = {
    version: number;
    live: StrategyOrders["live"][number][];
    nextDueMs: number | null;
    openTrades: StrategyOrders["openTrades"][number][];
  };
  const byStrategy = new Map<number, Entry>();
  const entryOf = (strategyId: number, version: number): Entry => {
    let entry = byStrategy.get(strategyId);
    if (!entry) {
      entry = { version, live: [], nextDueMs: null, openTrades: [] };
      byStrategy.set(strategyId, entry);
    }
    return entry;
  };
  if (strategyIds && strategyIds.length > 0) {
    const accounts = await db
      .selectFrom("accounts")
      .select(["strategy_id", "version"])
      .where("strategy_id", "in", [...strategyIds])
      .execute();
    for (const account of accounts) if (account.strategy_id !== null) entryOf(account.strategy_id, account.version);
  }
  for (const p of positions) {
    const threshold =
      p.mae_worst_price === null
        ? averagePrice({ quantity: decimal(p.quantity), cost: decimal(p.cost) })
        : decimal(p.mae_worst_price);
    if (threshold === null || p.side === null) continue;
    entryOf(p.strategy_id, p.version).openTrades.push({
      strategyId: p.strategy_id,
      fullSymbol: p.symbol,
      side: p.side,
      threshold,
    });
  }
  for (const row of rows) {
    const entry = entryOf(row.strategy_id, row.version);
    const status = row.status as OrderStatus;
    entry.live.push({
      id: row.id,
      strategyId: row.strategy_id,
      instrument: instrumentOf(row.symbol, row.symbol_type),
      side: row.side,
      type: row.order_type,
      limit: row.limit_price === null ? null : decimal(row.limit_price),
      stop: row.stop_price === null ? null : decimal(row.stop_price),
      working: WORKING.has(status),
    });
    for (const at of [row.expires_at, status === "PendingNew" ? row.parked_until : null]) {
      if (at !== null && (entry.nextDueMs === null || at < entry.nextDueMs)) entry.nextDueMs = at;
    }
  }
  return [...byStrategy].map(([strategyId, entry]) => ({ strategyId, ...entry }));
}
