import { copyDecision } from "../../core/autotrade/copy.js";
import { tradesAsCfd, VIRTUAL_LIMIT_REASON } from "../../core/autotrade/settings.js";
import { add, type Decimal, formatDecimal, isZero, storedDecimal } from "../../core/decimal.js";
import { hasExpired } from "../../core/orders/contract-expiry.js";
import { fromServiceSymbol, type SymbolType } from "../../core/symbols/instrument.js";
import type { NewAccountOrder, NewCopySkip } from "../../store/journal/batch.js";
import { type ConsumerWrites, noWrites, type OutboxConsumer } from "../outbox/consumer.js";
import type { OutboxEvent } from "../outbox/events.js";
import type { AutotradeDesk } from "./desk.js";

/** The copier's name among the outbox's consumers (its positions are stored under it). */
export const COPIER_CONSUMER = "autotrade_copier";

/**
 * The autotrade copier, an outbox consumer of the strategies' model
 * accounts. Each strategy order that starts working becomes, for every
 * enabled setup following the strategy, an account order scaled to the
 * follower (src/core/autotrade/copy.ts), or a skip recorded with its reason.
 * The account orders are written with the copier's position in the strategy's
 * events, in one commit: a copy is made exactly once however often the events
 * come, and goes to the broker only once it is durable (the desk sends it).
 * A strategy order that ends takes its open copies with it; a strategy that
 * goes flat takes its followers flat. The settlement of an expired contract
 * is not copied: the followers' brokers settle their own positions.
 */
export interface CopierMarket {
  /** The strategy's model account value now, or null when not known. */
  modelValue(strategyId: number): Decimal | null;
  /** A price to value a position at (the middle of the quote), or null. */
  price(symbol: string, symbolType: SymbolType): Decimal | null;
}

/** What a working order's event says (src/engine/outbox/events.ts payloadOf). */
interface WorkingPayload {
  readonly strategy_id: number;
  readonly status: string;
  readonly symbol: string;
  readonly symbol_type: SymbolType;
  readonly side: "buy" | "sell";
  readonly open_close: "open" | "close";
  readonly order_type: "market" | "limit" | "stop";
  readonly tif: "day" | "gtc";
  readonly quantity: string;
  readonly limit_price: string | null;
  readonly stop_price: string | null;
  readonly held?: string;
}

interface FillPayload {
  readonly strategy_id: number;
  readonly symbol: string;
  readonly position_after: string;
}

/** What every copy of a strategy order is scaled from. */
interface CopyTerms {
  readonly quantity: Decimal;
  readonly strategyHeld: Decimal;
  readonly modelValue: Decimal | null;
  readonly price: Decimal | null;
}

/** Whether an order or fill event is in an option or future that had expired when it happened. */
function inExpiredContract(payload: Readonly<Record<string, unknown>>, atMs: number): boolean {
  const { symbol, symbol_type: symbolType } = payload;
  if ((symbolType !== "option" && symbolType !== "future") || typeof symbol !== "string") return false;
  const instrument = fromServiceSymbol(symbol, symbolType);
  return instrument !== null && hasExpired(instrument, atMs);
}

export class Copier implements OutboxConsumer {
  readonly name = COPIER_CONSUMER;

  constructor(
    private readonly desk: AutotradeDesk,
    private readonly market: CopierMarket,
  ) {}

  consume(events: readonly OutboxEvent[]): ConsumerWrites {
    const accountOrders: NewAccountOrder[] = [];
    const copySkips: NewCopySkip[] = [];
    const visited = new Set<number>();
    for (const event of events) {
      const payload = event.payload as Record<string, unknown>;
      // What a strategy does in an expired contract (its settlement) is not copied: each broker settles its own.
      if (inExpiredContract(payload, event.atMs)) continue;
      if (event.kind === "accepted" || event.kind === "working") {
        const order = payload as unknown as WorkingPayload;
        // A held order (parked, or waiting for its parent) is copied when it starts working.
        if (event.kind === "accepted" && order.status !== "Working") continue;
        if (!visited.has(order.strategy_id)) {
          visited.add(order.strategy_id);
          this.desk.visit(order.strategy_id);
        }
        this.#copy(event, order, accountOrders, copySkips);
      } else if (event.kind === "canceled" || event.kind === "expired" || event.kind === "replaced") {
        if (event.orderId !== null) this.desk.cancelCopiesOf(event.orderId, `The strategy order was ${event.kind}`);
      } else if (event.kind === "fill") {
        const fill = payload as unknown as FillPayload;
        // The market reached the strategy's limit: its virtual limit copies go at market.
        if (event.orderId !== null) this.desk.releaseVirtualCopies(event.orderId);
        if (isZero(storedDecimal(fill.position_after))) this.desk.followFlat(fill.strategy_id, fill.symbol);
        else this.desk.strategyOpened(fill.strategy_id, fill.symbol);
      }
    }
    return { ...noWrites(), accountOrders, copySkips };
  }

  committed(writes: ConsumerWrites): void {
    this.desk.stored(writes.accountOrders);
  }

  dropped(writes: ConsumerWrites): void {
    this.desk.forget(writes.accountOrders);
  }

  #copy(event: OutboxEvent, order: WorkingPayload, made: NewAccountOrder[], skips: NewCopySkip[]): void {
    const sourceOrderId = event.orderId as number;
    // Worked out at the first follower: most strategies have none, and the model's value costs a pass over its positions.
    let terms: CopyTerms | null = null;
    for (const { account, setup } of this.desk.followersOf(order.strategy_id)) {
      terms ??= this.#termsOf(order);
      const { quantity, strategyHeld, modelValue, price } = terms;
      const key = `copy:${setup.id}:${sourceOrderId}`;
      if (this.desk.hasOrder(account, key)) continue;
      const open = order.open_close === "open";
      const held = this.desk.heldBy(account, order.strategy_id, order.symbol);
      const decision = copyDecision({
        symbolType: order.symbol_type,
        side: order.side,
        openClose: order.open_close,
        quantity,
        strategyHeld,
        // An opening copy counts what open opening orders will add; a closing one, what is left to close.
        followerHeld: open
          ? add(held, this.desk.openQuantity(account, setup.id, order.symbol, "open"))
          : add(held, this.desk.openQuantity(account, setup.id, order.symbol, "close")),
        scalingPercentage: setup.scaling,
        accountValue: account.value ?? storedDecimal("0"),
        modelValue: modelValue ?? storedDecimal("0"),
        price,
        settings: setup.settings,
        approval: account.approval,
      });
      if (!decision.copy) {
        skips.push({
          setup_id: setup.id,
          account_id: account.id,
          strategy_id: order.strategy_id,
          source_order_id: sourceOrderId,
          reason: decision.reason,
          message: decision.message,
          at: event.atMs,
        });
        continue;
      }
      const virtual = setup.settings.virtualLimitOrders && order.order_type === "limit";
      const row: NewAccountOrder = {
        account_id: account.id,
        setup_id: setup.id,
        strategy_id: order.strategy_id,
        source_order_id: sourceOrderId,
        purpose: "copy",
        symbol: order.symbol,
        symbol_type: order.symbol_type,
        side: order.side,
        open_close: order.open_close,
        order_type: order.order_type,
        tif: order.tif,
        quantity: formatDecimal(decision.quantity),
        limit_price: order.limit_price,
        stop_price: order.stop_price,
        status: "PendingNew",
        prior_status: null,
        awaiting_confirmation: setup.confirmationNeeded ? 1 : 0,
        virtual_limit: virtual ? 1 : 0,
        as_cfd: tradesAsCfd(order.symbol_type, setup.settings) ? 1 : 0,
        filled_quantity: "0",
        filled_notional: "0",
        idempotency_key: key,
        broker_order_id: null,
        replaces_id: null,
        reason: setup.confirmationNeeded
          ? "Held until the customer confirms it"
          : virtual
            ? VIRTUAL_LIMIT_REASON
            : null,
        created_at: event.atMs,
        updated_at: event.atMs,
        sent_at: null,
        closed_at: null,
      };
      made.push(row);
      // Held at once: the events after this one (a fill taking the strategy flat) see it.
      this.desk.adopt([row]);
    }
  }

  #termsOf(order: WorkingPayload): CopyTerms {
    const limit = order.limit_price === null ? null : storedDecimal(order.limit_price);
    const stop = order.stop_price === null ? null : storedDecimal(order.stop_price);
    return {
      quantity: storedDecimal(order.quantity),
      strategyHeld: storedDecimal(order.held ?? "0"),
      modelValue: this.market.modelValue(order.strategy_id),
      price: limit ?? stop ?? this.market.price(order.symbol, order.symbol_type),
    };
  }
}
