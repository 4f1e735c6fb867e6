import {
  abs,
  compare,
  type Decimal,
  div,
  fromInteger,
  isZero,
  max as larger,
  mul,
  ONE,
  sign,
  min as smaller,
  sub,
  ZERO,
} from "../decimal.js";
import type { SymbolType } from "../symbols/instrument.js";
import { type AccountApproval, NO_APPROVAL_NEEDED } from "./account-approval.js";
import { type ClassSettings, FOREX_UNIT, type SetupSettings } from "./settings.js";

/**
 * How much of a strategy order a follower copies. Opening orders are scaled:
 * the strategy's quantity times ScalingPercentage of the follower's account
 * value against the strategy's model account value, rounded down to what the
 * class trades in (whole shares and contracts, forex in lots), then clamped by
 * the setup's minimum and the room its maximum leaves. Closing orders follow
 * the follower's own holding in proportion: closing a third of the strategy's
 * position closes a third of the follower's, and closing all of it closes all
 * of the follower's (whatever scaling or partial fills made it). A copy the
 * setup forbids, or one that rounds to nothing, is skipped with its reason.
 */
export type SkipReason =
  | "class_disabled"
  | "long_disabled"
  | "short_disabled"
  | "closing_orders_only"
  | "rounds_to_zero"
  | "at_maximum"
  | "nothing_to_close"
  | "no_account_value"
  | "no_price"
  | "not_approved"
  | "cfd_not_approved";

export type CopyDecision =
  | { readonly copy: true; readonly quantity: Decimal }
  | { readonly copy: false; readonly reason: SkipReason; readonly message: string };

export interface CopyInput {
  readonly symbolType: SymbolType;
  readonly side: "buy" | "sell";
  readonly openClose: "open" | "close";
  /** The strategy order's quantity. */
  readonly quantity: Decimal;
  /** The strategy's position in the symbol before the order (signed). */
  readonly strategyHeld: Decimal;
  /** What the follower's setup holds in the symbol, with its open orders' quantity that would add to it (signed). */
  readonly followerHeld: Decimal;
  readonly scalingPercentage: Decimal;
  /** The follower account's value and the strategy model account's, in dollars. */
  readonly accountValue: Decimal;
  readonly modelValue: Decimal;
  /** A price to value a stock position at (the order's limit or stop, or the market), for MaxStocksDollars. */
  readonly price: Decimal | null;
  readonly settings: SetupSettings;
  /** The geo-site's approval of the account (./account-approval.ts); none needed when absent. */
  readonly approval?: AccountApproval;
}

const HUNDRED = fromInteger(100);

const skip = (reason: SkipReason, message: string): CopyDecision => ({ copy: false, reason, message });

/** What one unit of the class is: a share, a contract, a lot of forex. */
export function unitOf(symbolType: SymbolType, settings: SetupSettings): Decimal {
  return symbolType === "forex" ? fromInteger(settings.forex.lotSize) : fromInteger(1);
}

/** Rounds a quantity down to whole units of the class. */
export function wholeUnits(quantity: Decimal, unit: Decimal): Decimal {
  const units = div(quantity, unit);
  // Toward zero: what is left over is not copied.
  return mul(sub(units, (units % ONE) as Decimal), unit);
}

function classOf(symbolType: SymbolType, settings: SetupSettings): ClassSettings {
  switch (symbolType) {
    case "stock":
      return settings.stocks;
    case "option":
      return settings.options;
    case "future":
      return settings.futures;
    case "forex":
      return settings.forex;
  }
}

/** The largest position the setup allows in the symbol, in the order's units; null: no maximum. */
function maximumOf(input: CopyInput, unit: Decimal): Decimal | null | "no_price" {
  const { settings, symbolType } = input;
  if (symbolType === "stock") {
    if (settings.stocks.maxDollars === null) return null;
    if (input.price === null || sign(input.price) <= 0) return "no_price";
    return wholeUnits(div(fromInteger(settings.stocks.maxDollars), input.price), unit);
  }
  const cls = classOf(symbolType, settings);
  if (cls.max === null) return null;
  return symbolType === "forex" ? fromInteger(cls.max * FOREX_UNIT) : fromInteger(cls.max);
}

export function copyDecision(input: CopyInput): CopyDecision {
  const unit = unitOf(input.symbolType, input.settings);
  if (input.openClose === "close") return closing(input, unit);
  const cls = classOf(input.symbolType, input.settings);
  if (!cls.enabled) return skip("class_disabled", `The setup does not trade ${input.symbolType}s`);
  if (input.settings.closingOrdersOnly) return skip("closing_orders_only", "The setup copies closing orders only");
  // Closing copies are made whatever the approval: a follower is never left holding what it cannot exit.
  const approval = input.approval ?? NO_APPROVAL_NEEDED;
  if (!approval.approved)
    return skip("not_approved", "The account's geo-site has not approved it for autotrading: closing orders only");
  if (input.symbolType === "stock" && input.settings.stocks.asCfd && !approval.cfd)
    return skip("cfd_not_approved", "The account's geo-site has not approved it to trade CFDs");
  const long = input.side === "buy";
  if (long && !cls.long) return skip("long_disabled", `The setup does not take long ${input.symbolType} positions`);
  if (!long && !cls.short) return skip("short_disabled", `The setup does not take short ${input.symbolType} positions`);
  if (sign(input.accountValue) <= 0 || sign(input.modelValue) <= 0)
    return skip("no_account_value", "The account's or the strategy's value is not known");
  const scaled = div(
    mul(mul(input.quantity, div(input.scalingPercentage, HUNDRED)), input.accountValue),
    input.modelValue,
  );
  let quantity = wholeUnits(scaled, unit);
  const minimum = input.symbolType === "forex" ? fromInteger(cls.min * FOREX_UNIT) : fromInteger(cls.min);
  if (cls.min > 0 && compare(quantity, minimum) < 0) quantity = minimum;
  const maximum = maximumOf(input, unit);
  if (maximum === "no_price") return skip("no_price", "No price to value the stock position at");
  if (maximum !== null) {
    // The same direction's holding counts against the maximum.
    const sameWay = (long ? sign(input.followerHeld) > 0 : sign(input.followerHeld) < 0)
      ? abs(input.followerHeld)
      : ZERO;
    // The room left, in whole units: a holding off the unit grid leaves less, never a part unit.
    const room = wholeUnits(larger(sub(maximum, sameWay), ZERO), unit);
    if (isZero(room)) return skip("at_maximum", "The position is at the setup's maximum");
    quantity = smaller(quantity, room);
  }
  if (isZero(quantity)) return skip("rounds_to_zero", "The scaled quantity rounds to nothing");
  return { copy: true, quantity };
}

function closing(input: CopyInput, unit: Decimal): CopyDecision {
  const held = input.followerHeld;
  // A close sells a long holding or buys back a short one.
  const holds = input.side === "sell" ? sign(held) > 0 : sign(held) < 0;
  if (!holds) return skip("nothing_to_close", "The account holds nothing this order closes");
  const heldQuantity = abs(held);
  const strategyHeld = abs(input.strategyHeld);
  if (isZero(strategyHeld) || compare(input.quantity, strategyHeld) >= 0) return { copy: true, quantity: heldQuantity };
  const share = wholeUnits(div(mul(heldQuantity, input.quantity), strategyHeld), unit);
  if (isZero(share)) return skip("rounds_to_zero", "The follower's share of the close rounds to nothing");
  return { copy: true, quantity: smaller(share, heldQuantity) };
}
