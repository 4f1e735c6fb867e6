import { abs, compare, type Decimal, formatDecimal, isZero, max, neg, sign, sub, ZERO } from "../decimal.js";
import type { ErrorEntry } from "../errors.js";
import { checkOrder, closingSide, type OrderRequest, type OrderTerms } from "../orders/terms.js";

/**
 * A manual order in an autotraded brokerage account (NewAutotradeOrder,
 * API.md 4.2 and 4.3 rule 5): a closing order only, Stop or Limit, that
 * reduces what the setup of the strategy (Order.StrategyId) holds in the
 * symbol.
 *
 * It may close only what the setup's open closing orders leave uncovered:
 * the copies of the strategy's exits, the desk's own closes and earlier
 * manual orders are counted, so the manual order and the strategy's exits
 * together never sell more than is held, whichever fills first. The copier
 * counts open manual orders the same way when it sizes a later closing copy
 * (followerHeld in copy.ts), so the protection holds in both directions. The
 * automatic stop loss is not counted: it rests for the whole holding beside
 * every exit and follows the holding as it changes (auto-stop.ts).
 */
export interface ManualOrderRequest extends Omit<OrderRequest, "conditional" | "quote" | "profitTarget" | "stopLoss"> {
  /** Fields a manual exit does not take, by their wire name (Order.ProfitTarget...), when sent. */
  readonly unsupported: readonly string[];
  /** The field the symbol was given in (Order.ServiceSymbol or Order.ExchangeSymbol). */
  readonly symbolField: string;
}

export interface Holding {
  /** What the setup holds in the symbol, signed (short below zero). */
  readonly held: Decimal;
  /** What the setup's open closing orders (the automatic stop loss aside) would still close, from zero up. */
  readonly covered: Decimal;
}

export type ManualOrderCheck =
  | { readonly ok: true; readonly terms: OrderTerms }
  | { readonly ok: false; readonly errors: readonly ErrorEntry[] };

/**
 * What open closing orders would still close of a holding, from what they
 * would add to it (signed: a long holding's sells count below zero).
 */
export const coveredBy = (held: Decimal, openClosing: Decimal): Decimal =>
  max(sign(held) < 0 ? openClosing : neg(openClosing), ZERO);

/** What a new closing order may still close: the holding less what open closing orders cover. */
export const closable = (holding: Holding): Decimal => max(sub(abs(holding.held), holding.covered), ZERO);

/**
 * The manual order's own terms (400s): Limit or Stop, closing only, none of
 * the fields a manual exit does not take, and the quantity and prices of any
 * order (whole units, positive prices on the tick grid, the price its type
 * needs). Its position is checked against the setup's holding apart
 * (closingRefusal), once the setup is known.
 */
export function readManualOrder(request: ManualOrderRequest, nowMs: number): ManualOrderCheck {
  const errors: ErrorEntry[] = [];
  const invalid = (field: string, message: string) => errors.push({ name: "InvalidValue", field, message });
  if (request.type === "market")
    invalid("Order.OrderType", "NewAutotradeOrder sends Limit (2) and Stop (3) orders only");
  if (request.openClose === "open")
    invalid("Order.OpenClose", "NewAutotradeOrder sends closing orders only (API.md 4.3 rule 5)");
  for (const field of request.unsupported)
    invalid(field, `A manual exit order takes no ${field.slice("Order.".length)}`);
  const terms = checkOrder({ ...request, openClose: "close", conditional: true, quote: null }, ZERO, nowMs);
  if (!terms.ok) errors.push(...terms.errors);
  return errors.length > 0 || !terms.ok ? { ok: false, errors } : { ok: true, terms: terms.terms };
}

/**
 * Why the order may not close the setup's holding (409, 2010), or null: the
 * setup holds the symbol, the order is on the closing side, and it closes no
 * more than the open closing orders leave uncovered (Meta: Held, Covered,
 * Closable).
 */
export function closingRefusal(terms: OrderTerms, holding: Holding, symbolField: string): ErrorEntry | null {
  const symbol = terms.instrument.fullSymbol;
  if (isZero(holding.held)) {
    return {
      name: "NewOrderRejected",
      field: symbolField,
      message: `The setup holds no ${symbol}: NewAutotradeOrder only closes what it holds`,
    };
  }
  if (closingSide(holding.held) !== terms.side) {
    const long = sign(holding.held) > 0;
    return {
      name: "NewOrderRejected",
      field: "Order.Side",
      message: `The setup is ${long ? "long" : "short"} ${formatDecimal(abs(holding.held))} ${symbol}: its closing order ${long ? "sells (2)" : "buys (1)"}`,
    };
  }
  const left = closable(holding);
  if (compare(terms.quantity, left) <= 0) return null;
  return {
    name: "NewOrderRejected",
    field: "Order.OrderQuantity",
    message: `Only ${formatDecimal(left)} ${symbol} is left to close: the setup holds ${formatDecimal(abs(holding.held))} and its open closing orders cover ${formatDecimal(holding.covered)}`,
    meta: {
      Held: Number(formatDecimal(abs(holding.held))),
      Covered: Number(formatDecimal(holding.covered)),
      Closable: Number(formatDecimal(left)),
    },
  };
}
