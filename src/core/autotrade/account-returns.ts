import { add, type Decimal, div, fromInteger, mul, neg, sign, sub, ZERO } from "../decimal.js";
import type { Side } from "../fills.js";

/**
 * The returns of an autotraded strategy in a brokerage account (GetDashBoard,
 * docs/decisions.md "Autotrade account orders (issue 14)"), computed from the
 * account's marks at NYSE closes.
 *
 * At each close a setup's holdings are marked: the running profit and loss
 * (P&L) is every fill's cash flow (a buy pays quantity × price × multiplier,
 * a sale receives it) plus what is held, valued at the close. It is kept from
 * mark to mark: the previous mark's P&L, plus the cash flows of the fills
 * since, plus the change in the holdings' value. The capital allocated to a
 * setup is its ScalingPercentage of the account's value (the copier scales
 * its copies by just that share of the account).
 *
 * - TotalReturn = (P&L at the latest mark − P&L when the setup started) /
 *   the capital allocated when it started;
 * - TodayReturn = (P&L at the latest mark − P&L at the mark before it) /
 *   the capital allocated at the mark before it (the setup's start when the
 *   latest mark is its first): the last trading day marked.
 *
 * Both are fractions (0.0049 is 0.49%), null until the setup has a mark.
 */
export interface FillFlow {
  readonly side: Side;
  readonly quantity: Decimal;
  readonly price: Decimal;
  readonly multiplier: Decimal;
}

/** A fill's cash flow: a buy pays, a sale receives. */
export function cashFlowOf(fill: FillFlow): Decimal {
  const amount = mul(mul(fill.quantity, fill.price), fill.multiplier);
  return fill.side === "buy" ? neg(amount) : amount;
}

/** What was held before some fills: what is held now less what they added. */
export function heldBefore(now: Decimal, fillsSince: readonly Pick<FillFlow, "side" | "quantity">[]): Decimal {
  let held = now;
  for (const fill of fillsSince) held = fill.side === "buy" ? sub(held, fill.quantity) : add(held, fill.quantity);
  return held;
}

/** A mark of a setup's holdings: the running P&L and what the holdings were worth, in dollars. */
export interface PnlMark {
  readonly pnl: Decimal;
  readonly holdingsValue: Decimal;
}

/** Before the first mark nothing was held and nothing gained. */
export const NO_MARK: PnlMark = { pnl: ZERO, holdingsValue: ZERO };

/** The next mark: the previous P&L, the cash flows of the fills since, and the holdings' change in value. */
export function nextPnlMark(previous: PnlMark, cashFlow: Decimal, holdingsValue: Decimal): PnlMark {
  return { pnl: add(add(previous.pnl, cashFlow), sub(holdingsValue, previous.holdingsValue)), holdingsValue };
}

/** A setup at a moment: its running P&L and its account's value. */
export interface MarkedMoment {
  readonly pnl: Decimal;
  readonly accountValue: Decimal;
}

export interface SetupReturnsInput {
  readonly scalingPercentage: Decimal;
  /** When the setup started: the P&L of its holdings then and the account's value. */
  readonly start: MarkedMoment;
  /** The setup's marks since it started, oldest first (only the last two are read). */
  readonly marks: readonly MarkedMoment[];
}

export interface SetupReturns {
  readonly today: Decimal | null;
  readonly total: Decimal | null;
}

const HUNDRED = fromInteger(100);

/** The capital allocated to the setup when the account is worth `accountValue`; null when there is none. */
const capitalAt = (scalingPercentage: Decimal, accountValue: Decimal): Decimal | null => {
  const capital = div(mul(accountValue, scalingPercentage), HUNDRED);
  return sign(capital) > 0 ? capital : null;
};

export function setupReturns(input: SetupReturnsInput): SetupReturns {
  const last = input.marks.at(-1);
  if (!last) return { today: null, total: null };
  const before = input.marks.at(-2) ?? input.start;
  const startCapital = capitalAt(input.scalingPercentage, input.start.accountValue);
  const dayCapital = capitalAt(input.scalingPercentage, before.accountValue);
  return {
    today: dayCapital === null ? null : div(sub(last.pnl, before.pnl), dayCapital),
    total: startCapital === null ? null : div(sub(last.pnl, input.start.pnl), startCapital),
  };
}
