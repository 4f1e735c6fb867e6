import { storedDecimal } from "../core/decimal.js";
import type { StrategyFills } from "../core/rule575.js";
import type { Tx } from "../store/transaction.js";

/**
 * What the Rule 575 report reads: a white-label site's customers' copy fills
 * in a window (fills of account orders that copy a strategy order; closes,
 * automatic stops, manual and sync orders are not copies), and the
 * strategy's own fills of each order they copy.
 */
export interface CopyFillRow {
  readonly id: number;
  readonly account_order_id: number;
  readonly person_id: number;
  readonly account_number: string;
  readonly broker_id: number;
  readonly strategy_id: number;
  readonly strategy_name: string;
  readonly source_order_id: number;
  readonly symbol: string;
  readonly symbol_type: string;
  readonly side: "buy" | "sell";
  readonly quantity: string;
  readonly price: string;
  readonly filled_at: number;
}

export async function copyFillsOf(
  db: Tx,
  siteId: number,
  window: { readonly startMs: number; readonly endMs: number },
  strategyId: number | undefined,
): Promise<CopyFillRow[]> {
  let query = db
    .selectFrom("account_fills as f")
    .innerJoin("account_orders as o", "o.id", "f.account_order_id")
    .innerJoin("broker_accounts as b", "b.account_id", "f.account_id")
    .innerJoin("persons as p", "p.id", "b.person_id")
    .innerJoin("strategies as s", "s.id", "f.strategy_id")
    .select([
      "f.id",
      "f.account_order_id",
      "b.person_id",
      "b.account_number",
      "b.broker_id",
      "f.strategy_id",
      "s.name as strategy_name",
      "o.source_order_id",
      "f.symbol",
      "o.symbol_type",
      "f.side",
      "f.quantity",
      "f.price",
      "f.filled_at",
    ])
    .where("p.white_label_site_id", "=", siteId)
    .where("o.purpose", "=", "copy")
    .where("o.source_order_id", "is not", null)
    .where("f.filled_at", ">=", window.startMs)
    .where("f.filled_at", "<", window.endMs);
  if (strategyId !== undefined) query = query.where("f.strategy_id", "=", strategyId);
  const rows = await query.orderBy("f.filled_at").orderBy("f.id").execute();
  return rows as CopyFillRow[];
}

const CHUNK = 500;

/**
 * The strategy's fills of each order: its filled quantity and Σ quantity ×
 * price as the order keeps them (exact), and its first and last fill.
 */
export async function strategyFillsOf(db: Tx, orderIds: readonly number[]): Promise<Map<number, StrategyFills>> {
  const summaries = new Map<number, StrategyFills>();
  const ids = [...new Set(orderIds)];
  for (let first = 0; first < ids.length; first += CHUNK) {
    const rows = await db
      .selectFrom("orders as o")
      .innerJoin("fills as f", "f.order_id", "o.id")
      .select((eb) => [
        "o.id",
        "o.filled_quantity",
        "o.filled_notional",
        eb.fn.min("f.filled_at").as("first_at"),
        eb.fn.max("f.filled_at").as("last_at"),
      ])
      .where("o.id", "in", ids.slice(first, first + CHUNK))
      .groupBy(["o.id", "o.filled_quantity", "o.filled_notional"])
      .execute();
    for (const row of rows) {
      summaries.set(row.id, {
        quantity: storedDecimal(row.filled_quantity),
        notional: storedDecimal(row.filled_notional),
        firstAt: Number(row.first_at),
        lastAt: Number(row.last_at),
      });
    }
  }
  return summaries;
}
