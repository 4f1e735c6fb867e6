import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AccountOrderFacts,
  cancelRefusal,
  isReplaceableExit,
  priceRefusal,
  replaceRefusal,
} from "../../src/core/autotrade/account-order-rules.js";
import { decimal } from "../../src/core/decimal.js";
import type { OrderStatus } from "../../src/core/orders/status.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const order = (over: Partial<AccountOrderFacts> = {}): AccountOrderFacts => ({
  id: 7,
  purpose: "manual",
  openClose: "close",
  orderType: "limit",
  status: "Working",
  ...over,
});
const named = (entry: { name: string; field?: string } | null) =>
  entry === null ? null : `${entry.name} ${entry.field}`;

test("any open order may be canceled but the automatic stop loss; ended or pending ones are refused", () => {
  for (const purpose of ["copy", "close", "manual"] as const) assert.equal(cancelRefusal(order({ purpose })), null);
  assert.equal(cancelRefusal(order({ status: "PendingNew" })), null);
  assert.equal(cancelRefusal(order({ status: "PartiallyFilled" })), null);
  assert.equal(named(cancelRefusal(order({ purpose: "auto_stop" }))), "WrongState OrderId");
  for (const status of [
    "Filled",
    "Canceled",
    "Rejected",
    "Expired",
    "PendingCancel",
    "PendingReplace",
  ] as OrderStatus[])
    assert.equal(named(cancelRefusal(order({ status }))), "CancelRejected OrderId", status);
});

test("only strategy exits' copies and manual exits the broker holds take a new price", () => {
  assert.equal(isReplaceableExit({ purpose: "copy", openClose: "close" }), true);
  assert.equal(isReplaceableExit({ purpose: "manual", openClose: "close" }), true);
  assert.equal(isReplaceableExit({ purpose: "copy", openClose: "open" }), false);
  assert.equal(isReplaceableExit({ purpose: "auto_stop", openClose: "close" }), false);
  assert.equal(isReplaceableExit({ purpose: "close", openClose: "close" }), false);
  assert.equal(replaceRefusal(order()), null);
  assert.equal(replaceRefusal(order({ purpose: "copy", orderType: "stop", status: "PartiallyFilled" })), null);
  assert.equal(named(replaceRefusal(order({ purpose: "copy", openClose: "open" }))), "WrongState OrderId");
  assert.equal(named(replaceRefusal(order({ purpose: "auto_stop", orderType: "stop" }))), "WrongState OrderId");
  assert.equal(named(replaceRefusal(order({ purpose: "close", orderType: "market" }))), "WrongState OrderId");
  assert.equal(named(replaceRefusal(order({ purpose: "copy", orderType: "market" }))), "WrongState OrderId");
  assert.equal(named(replaceRefusal(order({ status: "PendingNew" }))), "CancelRejected OrderId");
  assert.equal(named(replaceRefusal(order({ status: "Filled" }))), "CancelRejected OrderId");
  assert.equal(named(replaceRefusal(order({ status: "PendingReplace" }))), "CancelRejected OrderId");
});

test("a new price is positive and on the instrument's grid", () => {
  const aapl = fromServiceSymbol("AAPL", "stock") as Instrument;
  const es = fromServiceSymbol("@ESM26", "future") as Instrument;
  assert.equal(priceRefusal(decimal("250.01"), aapl), null);
  assert.equal(priceRefusal(decimal("0.5001"), aapl), null, "US stocks below a dollar trade in 0.0001s");
  assert.equal(named(priceRefusal(decimal("250.001"), aapl)), "InvalidValue Price");
  assert.equal(named(priceRefusal(decimal("0"), aapl)), "InvalidValue Price");
  assert.equal(priceRefusal(decimal("5000.25"), es), null);
  assert.equal(named(priceRefusal(decimal("5000.1"), es)), "InvalidValue Price");
});
