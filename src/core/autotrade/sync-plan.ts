import { abs, add, compare, type Decimal, isZero, min, neg, sign, sub, ZERO } from "../decimal.js";
import type { SymbolType } from "../symbols/instrument.js";
import { copyDecision } from "./copy.js";
import type { SetupSettings } from "./settings.js";

/**
 * What AutoSync makes of one symbol of one setup: the scaled strategy
 * position the account should hold there (the target), whether it holds it,
 * and the market orders that take it there from what it holds.
 *
 * The target is the strategy's position scaled as the copier scales an
 * opening copy of that size (src/core/autotrade/copy.ts: scaling, the
 * account's against the model account's value, whole units, the setup's
 * minimum and maximum). Where the setup may not open that way (the class
 * or side switched off, closing orders only) the sync only ever reduces:
 * the target is what the account holds the strategy's way, at most the
 * scaled size, and nothing against it. A strategy flat in the symbol makes
 * the target flat.
 */
export type SyncBlock =
  /** The strategy held the position when the setup started with DoNotJoinOpenPositions. */
  | "not_joined"
  /** The strategy's open trade took a fill of an order marked DoNotSyncToOpen. */
  | "do_not_sync"
  /** Market orders of the setup are still working in the symbol: they are waited for. */
  | "orders_working"
  | "no_account_value"
  | "no_price"
  /** The contract has expired: the broker settles it, no order may trade it. */
  | "expired";

export interface SyncInput {
  readonly symbolType: SymbolType;
  /** The strategy's position (signed). */
  readonly strategyQuantity: Decimal;
  /** What the setup holds in the account (signed). */
  readonly held: Decimal;
  /** What the setup's working market orders in the symbol still add (signed). */
  readonly working: Decimal;
  readonly scalingPercentage: Decimal;
  readonly accountValue: Decimal | null;
  readonly modelValue: Decimal | null;
  /** The market's price, to value a stock position at against MaxStocksDollars. */
  readonly price: Decimal | null;
  readonly settings: SetupSettings;
  /** Why the strategy's position is not to be joined, when it is not. */
  readonly excluded: "not_joined" | "do_not_sync" | null;
  /** The contract has expired (src/core/orders/contract-expiry.ts). */
  readonly expired: boolean;
}

export interface SyncLeg {
  readonly side: "buy" | "sell";
  readonly openClose: "open" | "close";
  readonly quantity: Decimal;
}

export interface SyncPlan {
  /** The scaled position the account should hold (ScaledQuantity); null when it cannot be worked out. */
  readonly target: Decimal | null;
  /** The account holds the target. */
  readonly inSync: boolean;
  /** The market orders to make now: a close, an open, or a close then an open (a reversal). */
  readonly legs: readonly SyncLeg[];
  /** Why nothing is made although the account is not in sync. */
  readonly blocked: SyncBlock | null;
}

const opened = (settings: SetupSettings): SetupSettings => {
  const open = <C extends { enabled: boolean; long: boolean; short: boolean }>(c: C): C => ({
    ...c,
    enabled: true,
    long: true,
    short: true,
  });
  return {
    ...settings,
    closingOrdersOnly: false,
    futures: open(settings.futures),
    forex: open(settings.forex),
    stocks: open(settings.stocks),
    options: open(settings.options),
  };
};

type Unscaled = "no_account_value" | "no_price" | "opening_forbidden";

/** The signed scaled size of the strategy's position under the settings, or why there is none. */
function scaled(input: SyncInput, settings: SetupSettings): Decimal | Unscaled {
  const decision = copyDecision({
    symbolType: input.symbolType,
    side: sign(input.strategyQuantity) > 0 ? "buy" : "sell",
    openClose: "open",
    quantity: abs(input.strategyQuantity),
    strategyHeld: ZERO,
    // The target is a whole position: the maximum caps it, nothing held counts against it.
    followerHeld: ZERO,
    scalingPercentage: input.scalingPercentage,
    accountValue: input.accountValue ?? ZERO,
    modelValue: input.modelValue ?? ZERO,
    price: input.price,
    settings,
  });
  if (decision.copy) return sign(input.strategyQuantity) > 0 ? decision.quantity : neg(decision.quantity);
  switch (decision.reason) {
    case "no_account_value":
    case "no_price":
      return decision.reason;
    case "class_disabled":
    case "long_disabled":
    case "short_disabled":
    case "closing_orders_only":
      return "opening_forbidden";
    default:
      // Rounds to nothing, or a maximum of nothing.
      return ZERO;
  }
}

/** The target, or why it cannot be worked out. */
function targetOf(input: SyncInput): Decimal | "no_account_value" | "no_price" {
  if (isZero(input.strategyQuantity)) return ZERO;
  const size = scaled(input, input.settings);
  if (size !== "opening_forbidden") return size;
  // Opening is forbidden: reduce only, toward the scaled size, never opening or adding.
  if (sign(input.held) === 0 || sign(input.held) !== sign(input.strategyQuantity)) return ZERO;
  const free = scaled(input, opened(input.settings));
  if (typeof free === "string") return free === "opening_forbidden" ? ZERO : free;
  return sign(input.held) > 0 ? min(input.held, free) : neg(min(abs(input.held), abs(free)));
}

/** The orders taking a holding to the target: a close, an open, or a close then an open. */
export function legsBetween(from: Decimal, to: Decimal): SyncLeg[] {
  if (compare(from, to) === 0) return [];
  const close = (quantity: Decimal): SyncLeg => ({
    side: sign(from) > 0 ? "sell" : "buy",
    openClose: "close",
    quantity,
  });
  const open = (quantity: Decimal): SyncLeg => ({ side: sign(to) > 0 ? "buy" : "sell", openClose: "open", quantity });
  if (isZero(from)) return [open(abs(to))];
  if (isZero(to)) return [close(abs(from))];
  if (sign(from) !== sign(to)) return [close(abs(from)), open(abs(to))];
  return compare(abs(to), abs(from)) > 0 ? [open(sub(abs(to), abs(from)))] : [close(sub(abs(from), abs(to)))];
}

export function syncPlan(input: SyncInput): SyncPlan {
  // What is left in an expired contract is the broker's to settle: nothing is traded, and the holding is not judged.
  if (input.expired) return { target: null, inSync: false, legs: [], blocked: "expired" };
  const target = targetOf(input);
  if (typeof target === "string") return { target: null, inSync: false, legs: [], blocked: target };
  const inSync = compare(input.held, target) === 0;
  const expected = add(input.held, input.working);
  // Working orders make up the difference already: nothing more is made while they work.
  if (compare(expected, target) === 0) return { target, inSync, legs: [], blocked: inSync ? null : "orders_working" };
  // The strategy's position is left to the copier: it was not to be joined.
  if (input.excluded !== null && !isZero(input.strategyQuantity))
    return { target, inSync, legs: [], blocked: input.excluded };
  // Orders still working would make any order now a guess: the next sync sees where they left it.
  if (!isZero(input.working)) return { target, inSync, legs: [], blocked: "orders_working" };
  return { target, inSync, legs: legsBetween(input.held, target), blocked: null };
}
