import { decimal, PLACES, round, sub } from "../../core/decimal.js";
import type { RecordTotals } from "../../store/journal/batch.js";
import { RECORDS_CONSUMER } from "../../store/migrations/0014_strategy_records.js";
import { addTotals, type ConsumerWrites, noWrites, type OutboxConsumer } from "./consumer.js";
import type { OutboxEvent } from "./events.js";

/**
 * The records consumer: from each strategy's fills it keeps the totals
 * GetStrategyDetails states (fills by kind of instrument, the latest fill,
 * the closed trades' count, winners, losers, their sums and durations), so a
 * strategy's record is read in one row however long its history.
 */
export const recordsConsumer: OutboxConsumer = {
  name: RECORDS_CONSUMER,
  consume(events: readonly OutboxEvent[]): ConsumerWrites {
    const totals = new Map<number, RecordTotals>();
    for (const event of events) {
      if (event.kind !== "fill") continue;
      const fill = event.payload as unknown as FillPayload;
      const delta = totalsOfFill(fill);
      const kept = totals.get(fill.strategy_id);
      totals.set(fill.strategy_id, kept ? addTotals(kept, delta) : delta);
    }
    return { ...noWrites(), recordTotals: [...totals.values()] };
  },
};

const CENT_UNITS = 10n ** BigInt(PLACES - 2);

interface FillPayload {
  readonly strategy_id: number;
  readonly symbol_type: "stock" | "option" | "future" | "forex";
  readonly filled_at: number;
  /** Present on the fill that closed its trade. */
  readonly trade?: {
    readonly opened_at: number;
    readonly closed_at: number;
    readonly realized: string;
    readonly commission: string;
  };
}

function totalsOfFill(fill: FillPayload): RecordTotals {
  const trade = fill.trade;
  // Realized profit and commissions are whole cents (a decimal counts 10^-8 units).
  const profit = trade ? Number(round(sub(decimal(trade.realized), decimal(trade.commission)), 2) / CENT_UNITS) : 0;
  return {
    strategy_id: fill.strategy_id,
    fills_stock: fill.symbol_type === "stock" ? 1 : 0,
    fills_option: fill.symbol_type === "option" ? 1 : 0,
    fills_future: fill.symbol_type === "future" ? 1 : 0,
    fills_forex: fill.symbol_type === "forex" ? 1 : 0,
    latest_fill_at: fill.filled_at,
    closed_trades: trade ? 1 : 0,
    winners: profit > 0 ? 1 : 0,
    losers: profit < 0 ? 1 : 0,
    sum_winners_cents: profit > 0 ? profit : 0,
    sum_losers_cents: profit < 0 ? profit : 0,
    duration_ms: trade ? trade.closed_at - trade.opened_at : 0,
  };
}
