import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { copyDecision } from "../../src/core/autotrade/copy.js";
import {
  closable,
  closingRefusal,
  coveredBy,
  type ManualOrderRequest,
  readManualOrder,
} from "../../src/core/autotrade/manual-order.js";
import { settingsOfStart } from "../../src/core/autotrade/settings.js";
import { abs, add, compare, decimal, formatDecimal, fromInteger, neg, sign, ZERO } from "../../src/core/decimal.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const d = decimal;
const AAPL = fromServiceSymbol("AAPL", "stock") as Instrument;
const NOW = Date.parse("2026-03-10T14:00:00Z");

const request = (over: Partial<ManualOrderRequest> = {}): ManualOrderRequest => ({
  instrument: AAPL,
  type: "limit",
  side: "sell",
  tif: "gtc",
  quantity: d("10"),
  limit: d("250"),
  unsupported: [],
  symbolField: "Order.ServiceSymbol",
  ...over,
});

const fieldsOf = (r: ManualOrderRequest) => {
  const read = readManualOrder(r, NOW);
  return read.ok ? [] : read.errors.map((e) => `${e.name} ${e.field}`);
};

test("a manual order is Limit or Stop, closing only, without the fields a manual exit does not take", () => {
  assert.deepEqual(fieldsOf(request()), []);
  assert.deepEqual(fieldsOf(request({ type: "stop", limit: undefined, stop: d("180") })), []);
  assert.deepEqual(fieldsOf(request({ type: "market", limit: undefined })), ["InvalidValue Order.OrderType"]);
  assert.deepEqual(fieldsOf(request({ openClose: "open" })), ["InvalidValue Order.OpenClose"]);
  assert.deepEqual(fieldsOf(request({ unsupported: ["Order.ProfitTarget", "Order.ParkedUntilDate"] })), [
    "InvalidValue Order.ProfitTarget",
    "InvalidValue Order.ParkedUntilDate",
  ]);
  // The terms of any order: the price its type needs, on the grid; whole units.
  assert.deepEqual(fieldsOf(request({ limit: undefined })), ["MissingValue Order.Limit"]);
  assert.deepEqual(fieldsOf(request({ limit: d("250.001") })), ["InvalidValue Order.Limit"]);
  assert.deepEqual(fieldsOf(request({ quantity: d("1.5") })), ["InvalidValue Order.OrderQuantity"]);
  const read = readManualOrder(request({ openClose: "close" }), NOW);
  assert.ok(read.ok);
  assert.equal(read.terms.openClose, "close");
});

const terms = (over: Partial<ManualOrderRequest> = {}) => {
  const read = readManualOrder(request(over), NOW);
  assert.ok(read.ok);
  return read.terms;
};

test("against the holding: something held, on the closing side, no more than is left uncovered", () => {
  const refusal = (held: string, covered: string, over: Partial<ManualOrderRequest> = {}) => {
    const found = closingRefusal(terms(over), { held: d(held), covered: d(covered) }, "Order.ServiceSymbol");
    return found === null ? null : `${found.name} ${found.field}`;
  };
  assert.equal(refusal("50", "0"), null);
  assert.equal(refusal("50", "40"), null);
  assert.equal(refusal("50", "41"), "NewOrderRejected Order.OrderQuantity");
  assert.equal(refusal("0", "0"), "NewOrderRejected Order.ServiceSymbol");
  assert.equal(refusal("-50", "0"), "NewOrderRejected Order.Side");
  assert.equal(refusal("-50", "0", { side: "buy" }), null);
  assert.equal(refusal("50", "0", { side: "buy" }), "NewOrderRejected Order.Side");
  const meta = closingRefusal(terms({ quantity: d("11") }), { held: d("30"), covered: d("20") }, "Order.ServiceSymbol");
  assert.deepEqual(meta?.meta, { Held: 30, Covered: 20, Closable: 10 });
});

test("what open closing orders cover: a long holding's sells, a short one's buys", () => {
  assert.equal(formatDecimal(coveredBy(d("50"), d("-30"))), "30");
  assert.equal(formatDecimal(coveredBy(d("-50"), d("30"))), "30");
  assert.equal(formatDecimal(coveredBy(d("50"), d("5"))), "0");
  assert.equal(formatDecimal(closable({ held: d("-50"), covered: d("60") })), "0");
});

/**
 * The protection against overselling, as the desk applies it: manual exits
 * (this rule) and the copier's closing copies (copy.ts, which counts open
 * closes in followerHeld) arriving in any order never have more open to close
 * than the setup holds.
 */
test("manual exits and the strategy's closing copies together never close more than is held", () => {
  const settings = settingsOfStart({ EnableStocks: true });
  const step = fc.oneof(
    fc.record({ kind: fc.constant("manual" as const), quantity: fc.integer({ min: 1, max: 120 }) }),
    fc.record({
      kind: fc.constant("copy" as const),
      // The strategy closes this much of its position of 100.
      quantity: fc.integer({ min: 1, max: 100 }),
    }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: -100, max: 100 }).filter((n) => n !== 0),
      fc.array(step, { maxLength: 12 }),
      (h, steps) => {
        const held = fromInteger(h);
        let open = ZERO; // signed: what the open closing orders would add to the holding
        for (const s of steps) {
          const side = sign(held) > 0 ? "sell" : "buy";
          if (s.kind === "manual") {
            const made = terms({ quantity: fromInteger(s.quantity), side });
            if (closingRefusal(made, { held, covered: coveredBy(held, open) }, "Order.ServiceSymbol") === null) {
              open = add(open, side === "sell" ? neg(made.quantity) : made.quantity);
            }
          } else {
            const decision = copyDecision({
              symbolType: "stock",
              side,
              openClose: "close",
              quantity: fromInteger(s.quantity),
              strategyHeld: fromInteger(100),
              followerHeld: add(held, open),
              scalingPercentage: d("100"),
              accountValue: d("100000"),
              modelValue: d("100000"),
              price: d("200"),
              settings,
            });
            if (decision.copy) open = add(open, side === "sell" ? neg(decision.quantity) : decision.quantity);
          }
          assert.ok(compare(abs(open), abs(held)) <= 0, `open closes ${formatDecimal(open)} over holding ${h}`);
        }
      },
    ),
  );
});
