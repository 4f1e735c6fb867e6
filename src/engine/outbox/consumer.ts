import type { NewAccountOrder, NewCopySkip, RecordTotals } from "../../store/journal/batch.js";
import type { OutboxEvent } from "./events.js";

/**
 * A consumer of the outbox: it reads each account's events in order and
 * turns them into writes, which are committed in one transaction with its new
 * position in that account's events (src/engine/outbox/runner.ts). Events
 * may come again (after a crash, or when another process consumed them
 * first): the position, moved only from where it was, makes each count once.
 * A consumer that keeps state in memory is told what became of its writes:
 * committed, or dropped (another process moved its position first, or the
 * batch failed; the events then come again).
 */
export interface OutboxConsumer {
  readonly name: string;
  consume(events: readonly OutboxEvent[]): ConsumerWrites;
  committed?(writes: ConsumerWrites): void;
  dropped?(writes: ConsumerWrites): void;
}

/** The writes consumers may make, committed with their positions. */
export interface ConsumerWrites {
  readonly recordTotals: readonly RecordTotals[];
  readonly accountOrders: readonly NewAccountOrder[];
  readonly copySkips: readonly NewCopySkip[];
}

export const noWrites = (): ConsumerWrites => ({ recordTotals: [], accountOrders: [], copySkips: [] });

/**
 * The writes of deliveries as one, in their order (record totals of a
 * strategy add up). A batch merges every delivery it carries at once: merging
 * them two at a time copied what was merged so far for each, quadratic in the
 * deliveries of a batch.
 */
export function mergeWrites(deliveries: readonly ConsumerWrites[]): ConsumerWrites {
  const totals = new Map<number, RecordTotals>();
  const accountOrders: NewAccountOrder[] = [];
  const copySkips: NewCopySkip[] = [];
  for (const writes of deliveries) {
    for (const next of writes.recordTotals) {
      const kept = totals.get(next.strategy_id);
      totals.set(next.strategy_id, kept ? addTotals(kept, next) : next);
    }
    for (const order of writes.accountOrders) accountOrders.push(order);
    for (const skip of writes.copySkips) copySkips.push(skip);
  }
  return { recordTotals: [...totals.values()], accountOrders, copySkips };
}

export const addTotals = (a: RecordTotals, b: RecordTotals): RecordTotals => ({
  strategy_id: a.strategy_id,
  fills_stock: a.fills_stock + b.fills_stock,
  fills_option: a.fills_option + b.fills_option,
  fills_future: a.fills_future + b.fills_future,
  fills_forex: a.fills_forex + b.fills_forex,
  latest_fill_at:
    a.latest_fill_at === null ? b.latest_fill_at : Math.max(a.latest_fill_at, b.latest_fill_at ?? a.latest_fill_at),
  closed_trades: a.closed_trades + b.closed_trades,
  winners: a.winners + b.winners,
  losers: a.losers + b.losers,
  sum_winners_cents: a.sum_winners_cents + b.sum_winners_cents,
  sum_losers_cents: a.sum_losers_cents + b.sum_losers_cents,
  duration_ms: a.duration_ms + b.duration_ms,
});
