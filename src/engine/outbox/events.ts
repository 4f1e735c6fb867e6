import type { Selectable } from "kysely";
import type { NewFill, NewOrderEvent, StoredOrder, StoredTrade } from "../../store/journal/batch.js";
import type { OrderEventsTable } from "../../store/schema.js";
import type { Tx } from "../../store/transaction.js";
import type { OrderEvent, OrderEventKind } from "../frame/journal-entry.js";

/**
 * The outbox as its consumers read it: an account's order events and fills
 * in the order they were committed (seq, gap-free per account), each with
 * what it says as stored (a JSON object).
 */
export interface OutboxEvent {
  readonly accountId: number;
  readonly seq: number;
  readonly kind: OrderEventKind;
  readonly orderId: number | null;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly atMs: number;
}

/** What an event is made from: the order as it stands after it, and for a fill the fill (and the trade it closed). */
export interface EventFacts {
  readonly kind: OrderEventKind;
  /** After every event of the operation, for a fill. */
  readonly order: StoredOrder;
  readonly fill?: NewFill | undefined;
  /** For the fill that closed its trade. */
  readonly closedTrade?: StoredTrade | undefined;
  /**
   * For an order accepted or starting to work, the account's position in its
   * symbol at that moment (signed): the autotrade copier scales a closing
   * order by the share of the position it closes.
   */
  readonly held?: string | undefined;
}

/**
 * What an event says: a fill (with, when it closed its trade, the trade's
 * opening, closing, realized profit and commission); an accepted order whole;
 * a working one with what the fill loop needs to watch it and the copier to
 * copy it; any other its state after the event. Accepted and working ones
 * carry the position held in the symbol then.
 */
export function payloadOf(event: EventFacts): Readonly<Record<string, unknown>> {
  if (event.fill) {
    const trade = event.closedTrade;
    // Keys a spread lacks go before it (docs/decisions.md, "Objects keep their hidden classes").
    return trade
      ? {
          trade: {
            opened_at: trade.opened_at,
            closed_at: trade.closed_at,
            realized: trade.realized,
            commission: trade.commission,
          },
          ...event.fill,
        }
      : event.fill;
  }
  const { order } = event;
  if (event.kind === "accepted") return event.held === undefined ? order : { held: event.held, ...order };
  if (event.kind !== "working") {
    return {
      status: order.status,
      filled_quantity: order.filled_quantity,
      filled_notional: order.filled_notional,
      info: order.info,
    };
  }
  return {
    status: order.status,
    filled_quantity: order.filled_quantity,
    filled_notional: order.filled_notional,
    info: order.info,
    symbol: order.symbol,
    symbol_type: order.symbol_type,
    side: order.side,
    open_close: order.open_close,
    tif: order.tif,
    quantity: order.quantity,
    order_type: order.order_type,
    limit_price: order.limit_price,
    stop_price: order.stop_price,
    strategy_id: order.strategy_id,
    ...(event.held !== undefined ? { held: event.held } : {}),
  };
}

export const outboxEventOf = (event: OrderEvent): OutboxEvent => ({
  accountId: event.accountId,
  seq: event.seq,
  kind: event.kind,
  orderId: event.orderId,
  payload: event.payload,
  atMs: event.atMs,
});

/** The outbox row of an event, as the journal stores it. */
export function outboxRowOf(event: OrderEvent, origin: string): NewOrderEvent {
  return {
    account_id: event.accountId,
    seq: event.seq,
    kind: event.kind,
    order_id: event.orderId,
    payload: JSON.stringify(event.payload),
    actor_person_id: event.actorPersonId,
    on_behalf_of_person_id: event.onBehalfOfPersonId,
    origin,
    at: event.atMs,
  };
}

/** An event read back from the outbox. */
export const outboxEventOfRow = (row: Selectable<OrderEventsTable>): OutboxEvent => ({
  accountId: row.account_id,
  seq: row.seq,
  kind: row.kind as OrderEventKind,
  orderId: row.order_id,
  payload: JSON.parse(row.payload) as Readonly<Record<string, unknown>>,
  atMs: row.at,
});

/**
 * A consumer's stored position in an account's events (null: none yet) and
 * the events after it, in order (at most `limit` of them when given).
 */
export async function eventsAfterPosition(
  db: Tx,
  consumer: string,
  accountId: number,
  limit?: number,
): Promise<{ readonly position: number | null; readonly events: OutboxEvent[] }> {
  const stored = await db
    .selectFrom("outbox_positions")
    .select("seq")
    .where("consumer", "=", consumer)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  const position = stored?.seq ?? null;
  let query = db
    .selectFrom("order_events")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("seq", ">", position ?? 0)
    .orderBy("seq");
  if (limit !== undefined) query = query.limit(limit);
  return { position, events: (await query.execute()).map(outboxEventOfRow) };
}
