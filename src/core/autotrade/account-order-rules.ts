import { compare, type Decimal, formatDecimal, isMultipleOf, ZERO } from "../decimal.js";
import type { ErrorEntry } from "../errors.js";
import type { OrderStatus } from "../orders/status.js";
import { tickAt } from "../orders/terms.js";
import type { Instrument } from "../symbols/instrument.js";
import { BROKER_TERMINAL } from "./broker-order.js";

/**
 * What the customer may do to an open order of an autotraded account
 * (CancelAutotradeOrder, ReplaceAutotradeOrder, API.md 4.2): cancel any open
 * order but the automatic stop loss, and give a new price to a strategy exit
 * (a copy of the strategy's closing order) or a manual exit order that the
 * broker holds. Each refusal names OrderId (or Price). The broker's own word
 * comes later, through the broker-order state machine (broker-order.ts).
 */
export interface AccountOrderFacts {
  readonly id: number;
  readonly purpose: "copy" | "close" | "auto_stop" | "manual" | "sync";
  readonly openClose: "open" | "close";
  readonly orderType: "market" | "limit" | "stop";
  readonly status: OrderStatus;
}

const FIELD = "OrderId";

/** Why an order of the account is no longer open to a request, or null when it is. */
function notOpen(order: AccountOrderFacts, asked: "canceled" | "replaced"): ErrorEntry | null {
  if (BROKER_TERMINAL.has(order.status)) {
    return {
      name: "CancelRejected",
      field: FIELD,
      message: `Order ${order.id} is ${order.status}: it is no longer open`,
    };
  }
  if (order.status === "PendingCancel") {
    return { name: "CancelRejected", field: FIELD, message: `Order ${order.id} is being canceled already` };
  }
  if (order.status === "PendingReplace") {
    return {
      name: "CancelRejected",
      field: FIELD,
      message: `A new price of order ${order.id} waits for the broker's answer: it can be ${asked} once the broker has answered`,
    };
  }
  return null;
}

/** Why the order cannot be canceled, or null when a cancel may be asked of the broker. */
export function cancelRefusal(order: AccountOrderFacts): ErrorEntry | null {
  if (order.purpose === "auto_stop") {
    return {
      name: "WrongState",
      field: FIELD,
      message: `Order ${order.id} is the automatic stop loss (AutoStopLossDollars): it cannot be canceled`,
    };
  }
  return notOpen(order, "canceled");
}

/** Whether the order is an exit the customer may give a new price: a strategy exit's copy or a manual exit. */
export const isReplaceableExit = (order: Pick<AccountOrderFacts, "purpose" | "openClose">): boolean =>
  order.purpose === "manual" || (order.purpose === "copy" && order.openClose === "close");

const WHAT: Readonly<Record<AccountOrderFacts["purpose"], string>> = {
  copy: "a copy of the strategy's opening order",
  close: "the service's close following the strategy to flat",
  auto_stop: "the automatic stop loss",
  manual: "a manual exit",
  sync: "AutoSync's order at the market's open",
};

/** Why the price is not one the order may take, or null (a positive price on the instrument's grid). */
export function priceRefusal(price: Decimal, instrument: Instrument): ErrorEntry | null {
  if (compare(price, ZERO) <= 0) return { name: "InvalidValue", field: "Price", message: "Price must be positive" };
  const tick = tickAt(instrument, price);
  if (!isMultipleOf(price, tick)) {
    return {
      name: "InvalidValue",
      field: "Price",
      message: `Price must be a multiple of the tick size ${formatDecimal(tick)} for ${instrument.fullSymbol}`,
    };
  }
  return null;
}

/** Why the order cannot take a new price, or null when the replace may be asked of the broker. */
export function replaceRefusal(order: AccountOrderFacts): ErrorEntry | null {
  if (!isReplaceableExit(order)) {
    return {
      name: "WrongState",
      field: FIELD,
      message: `Only strategy exit orders and manual exit orders take a new price: order ${order.id} is ${WHAT[order.purpose]}`,
    };
  }
  if (order.orderType === "market") {
    return { name: "WrongState", field: FIELD, message: `Order ${order.id} is a market order: it has no price` };
  }
  const closed = notOpen(order, "replaced");
  if (closed) return closed;
  if (order.status === "PendingNew") {
    return {
      name: "CancelRejected",
      field: FIELD,
      message: `Order ${order.id} has not reached the broker yet: its price can be replaced once the broker holds it`,
    };
  }
  return null;
}
