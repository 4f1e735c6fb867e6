import type { OrderStatus } from "../core/orders/status.js";
import { type OrderView, orderViews } from "./order-reads.js";
import { dbOf, type Runtime } from "./runtime.js";

/**
 * Signals as the legacy commands name and list them: a signal is an order,
 * named by its service id or by the id its sender chose (`signalid`), and
 * listed with the trades its fills opened and closed. These read what the
 * caller has been found to reach; they check no rights themselves.
 */

/** The service id of the strategy's signal with this service id or caller-chosen id, or null when it has none. */
export async function signalNamed(runtime: Runtime, strategyId: number, name: string): Promise<number | null> {
  const row = await dbOf(runtime)
    .selectFrom("orders")
    .select("id")
    .where("strategy_id", "=", strategyId)
    .where((eb) =>
      eb.or([eb("local_signal_id", "=", name), ...(/^\d{1,15}$/.test(name) ? [eb("id", "=", Number(name))] : [])]),
    )
    .orderBy("id")
    .executeTakeFirst();
  return row?.id ?? null;
}

/** The record of a signal known to exist. */
export async function signalRecord(runtime: Runtime, signalId: number): Promise<OrderView> {
  return (await orderViews(dbOf(runtime)).where("o.id", "=", signalId).executeTakeFirstOrThrow()) as OrderView;
}

/**
 * Which signals to list: those posted, or those that ended traded, expired
 * or canceled, within a window of that time (both ends inclusive).
 */
export interface SignalWindow {
  readonly by: "posted" | "traded" | "expired" | "canceled";
  readonly startMs?: number | undefined;
  readonly endMs?: number | undefined;
}

const ENDED_AS: Readonly<Record<Exclude<SignalWindow["by"], "posted">, OrderStatus>> = {
  traded: "Filled",
  expired: "Expired",
  canceled: "Canceled",
};

export interface SignalWithTrades {
  readonly signal: OrderView;
  /** The trade the signal's fills opened, if any. */
  readonly openingTradeId: number | null;
  /** The trade the signal's fills closed, if any. */
  readonly closingTradeId: number | null;
}

/** The strategy's signals in every state (within the window, when one is given), oldest first, with their trades. */
export async function signalsWithTrades(
  runtime: Runtime,
  strategyId: number,
  window?: SignalWindow,
): Promise<SignalWithTrades[]> {
  const db = dbOf(runtime);
  let query = orderViews(db).where("o.strategy_id", "=", strategyId);
  if (window !== undefined) {
    const column = window.by === "posted" ? "o.posted_at" : "o.closed_at";
    if (window.by !== "posted") query = query.where("o.status", "=", ENDED_AS[window.by]);
    if (window.startMs !== undefined) query = query.where(column, ">=", window.startMs);
    if (window.endMs !== undefined) query = query.where(column, "<=", window.endMs);
  }
  const signals = (await query.orderBy("o.id").execute()) as OrderView[];
  if (signals.length === 0) return [];
  const fills = await db
    .selectFrom("fills")
    .select(["order_id", "trade_id"])
    .where("strategy_id", "=", strategyId)
    .orderBy("id")
    .execute();
  const tradesOf = new Map<number, Set<number | null>>();
  for (const fill of fills) tradesOf.set(fill.order_id, (tradesOf.get(fill.order_id) ?? new Set()).add(fill.trade_id));
  return signals.map((signal) => {
    const trades = [...(tradesOf.get(signal.id) ?? [])];
    const first = trades[0] ?? null;
    const last = trades[trades.length - 1] ?? null;
    // A reversing fill was split: its first part closed a trade, the second opened the next.
    return signal.open_close === "close"
      ? { signal, openingTradeId: trades.length > 1 ? last : null, closingTradeId: first }
      : { signal, openingTradeId: last, closingTradeId: trades.length > 1 ? first : null };
  });
}
