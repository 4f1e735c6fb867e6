import { type Decimal, decimal, div, fromInteger, mul, parseDecimal, round, sub, ZERO } from "./decimal.js";

/**
 * The Rule 575 test of one autotrade fill (docs/decisions.md "Rule 575
 * (issue 14)"): a copy of a strategy order, filled in a follower's
 * brokerage account, is an exception when its price is worse than the
 * strategy's volume-weighted fill price of that order by more than the
 * site's tolerance, or when it executed outside the strategy's window (from
 * the strategy's first fill of the order to `windowSeconds` after its last;
 * a strategy order with no fill has no window). Worse is higher for a buy
 * and lower for a sell. The test is exact: no division rounds it.
 */
export const RULE575_DEFAULTS = {
  /** Basis points of the strategy's price (25: 0.25 %). */
  toleranceBps: decimal("25"),
  windowSeconds: 60,
} as const;

/** The bounds an operator may set: basis points to the hundredth, and up to a day. */
export const RULE575_BOUNDS = { maxToleranceBps: decimal("10000"), maxWindowSeconds: 86_400 } as const;

export interface Rule575Terms {
  readonly toleranceBps: Decimal;
  readonly windowSeconds: number;
}

/** The strategy's fills of one order: quantity, Σ quantity × price, and the first and last fill times. */
export interface StrategyFills {
  readonly quantity: Decimal;
  readonly notional: Decimal;
  readonly firstAt: number;
  readonly lastAt: number;
}

export interface CopyFill {
  readonly side: "buy" | "sell";
  readonly price: Decimal;
  readonly filledAt: number;
}

export type Rule575Reason = "Slippage" | "OutsideWindow";

export interface Judgement {
  /** The strategy's volume-weighted fill price of the order (rounded to 8 places to show), or null: no fill. */
  readonly strategyPrice: Decimal | null;
  /** How much worse the copy's price is (negative: better), in price and in basis points (to 2 places). */
  readonly slippage: Decimal | null;
  readonly slippageBps: Decimal | null;
  /** When the window closes: the strategy's last fill plus the window. */
  readonly windowEndsAt: number | null;
  readonly reasons: readonly Rule575Reason[];
}

const UNIT = fromInteger(1);
const BPS = 10_000n;

/** Judges one copy fill against the strategy's fills of the order it copies. */
export function judgeCopyFill(fill: CopyFill, strategy: StrategyFills | null, terms: Rule575Terms): Judgement {
  if (strategy === null || strategy.quantity <= ZERO) {
    return { strategyPrice: null, slippage: null, slippageBps: null, windowEndsAt: null, reasons: ["OutsideWindow"] };
  }
  const reasons: Rule575Reason[] = [];
  // In units of 10^-8: (price × Q − N) is how much worse, times Q; worse by more than t bps of N/Q when × 10^4 > t × N.
  const worseTimesQuantity =
    (fill.price * strategy.quantity - strategy.notional * UNIT) * (fill.side === "buy" ? 1n : -1n);
  if (worseTimesQuantity * BPS > terms.toleranceBps * strategy.notional) reasons.push("Slippage");
  const windowEndsAt = strategy.lastAt + terms.windowSeconds * 1000;
  if (fill.filledAt < strategy.firstAt || fill.filledAt > windowEndsAt) reasons.push("OutsideWindow");
  const strategyPrice = div(strategy.notional, strategy.quantity);
  const slippage = fill.side === "buy" ? sub(fill.price, strategyPrice) : sub(strategyPrice, fill.price);
  return {
    strategyPrice,
    slippage,
    slippageBps: round(div(mul(slippage, fromInteger(10_000)), strategyPrice), 2),
    windowEndsAt,
    reasons,
  };
}

/** A tolerance as an operator states it: basis points, 0 to 10000, at most two decimal places; else null. */
export function readToleranceBps(text: string): Decimal | null {
  const value = parseDecimal(text);
  if (value === null || value < ZERO || value > RULE575_BOUNDS.maxToleranceBps || round(value, 2) !== value) {
    return null;
  }
  return value;
}

/** A window as an operator states it: whole seconds, 0 to a day; else null. */
export function readWindowSeconds(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null;
  const seconds = Number(text);
  return seconds <= RULE575_BOUNDS.maxWindowSeconds ? seconds : null;
}
