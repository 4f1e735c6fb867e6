import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { compare, type Decimal, decimal, formatDecimal, fromInteger } from "../../src/core/decimal.js";
import { type Fill, fillAgainst, type Quote, type WorkingOrder } from "../../src/core/fills.js";

const q = (bid: string, ask: string, bidSize: string | null = null, askSize: string | null = null): Quote => ({
  bid: decimal(bid),
  ask: decimal(ask),
  bidSize: bidSize === null ? null : decimal(bidSize),
  askSize: askSize === null ? null : decimal(askSize),
});
const order = (
  type: WorkingOrder["type"],
  side: WorkingOrder["side"],
  price: string | null,
  leaves = "10",
): WorkingOrder => ({
  type,
  side,
  limit: type === "limit" && price ? decimal(price) : null,
  stop: type === "stop" && price ? decimal(price) : null,
  leaves: decimal(leaves),
});
const show = (fill: Fill | null) => (fill ? `${formatDecimal(fill.quantity)}@${formatDecimal(fill.price)}` : "none");

test("market orders take the ask when buying and the bid when selling", () => {
  assert.equal(show(fillAgainst(order("market", "buy", null), q("99.98", "100.02"))), "10@100.02");
  assert.equal(show(fillAgainst(order("market", "sell", null), q("99.98", "100.02"))), "10@99.98");
});

test("limit orders fill when the market reaches the limit, at the better price on a gap", () => {
  const buy = order("limit", "buy", "100");
  assert.equal(show(fillAgainst(buy, q("100.01", "100.03"))), "none");
  assert.equal(show(fillAgainst(buy, q("99.99", "100"))), "10@100");
  assert.equal(show(fillAgainst(buy, q("98.50", "98.60"))), "10@98.6", "gap down through a buy limit");
  const sell = order("limit", "sell", "100");
  assert.equal(show(fillAgainst(sell, q("99.98", "99.99"))), "none");
  assert.equal(show(fillAgainst(sell, q("101.10", "101.20"))), "10@101.1", "gap up through a sell limit");
});

test("stop orders trigger when the market reaches the stop, at the worse of stop and market on a gap", () => {
  const buyStop = order("stop", "buy", "105");
  assert.equal(show(fillAgainst(buyStop, q("104.90", "104.95"))), "none");
  assert.equal(show(fillAgainst(buyStop, q("104.98", "105"))), "10@105");
  assert.equal(show(fillAgainst(buyStop, q("107.00", "107.10"))), "10@107.1", "gap up through a buy stop");
  const sellStop = order("stop", "sell", "95");
  assert.equal(show(fillAgainst(sellStop, q("95.01", "95.03"))), "none");
  assert.equal(show(fillAgainst(sellStop, q("93.00", "93.05"))), "10@93", "gap down through a sell stop");
});

test("a quote smaller than the order fills part of it; a quote without size fills it all", () => {
  assert.equal(show(fillAgainst(order("market", "buy", null, "500"), q("10", "10.01", "300", "200"))), "200@10.01");
  assert.equal(show(fillAgainst(order("market", "sell", null, "500"), q("10", "10.01", "300", "200"))), "300@10");
  assert.equal(show(fillAgainst(order("market", "sell", null, "500"), q("10", "10.01", "0", "0"))), "none");
  assert.equal(show(fillAgainst(order("market", "buy", null, "0"), q("10", "10.01"))), "none");
});

test("a fill never exceeds what is left, and a limit never fills at a worse price than its limit", () => {
  const price = fc.integer({ min: 1, max: 100_000 }).map((n) => (BigInt(n) * 1_000_000n) as Decimal);
  fc.assert(
    fc.property(
      fc.constantFrom("buy", "sell"),
      price,
      price,
      fc.integer({ min: 0, max: 500 }),
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: 1, max: 1000 }),
      (side, limit, mid, spreadTicks, leaves, size) => {
        const bid = mid;
        const ask = (mid + BigInt(spreadTicks) * 1_000_000n) as Decimal;
        const quote: Quote = { bid, ask, bidSize: fromInteger(size), askSize: fromInteger(size) };
        const fill = fillAgainst({ type: "limit", side, limit, stop: null, leaves: fromInteger(leaves) }, quote);
        if (!fill) return;
        assert.ok(compare(fill.quantity, fromInteger(leaves)) <= 0);
        assert.ok(compare(fill.quantity, fromInteger(size)) <= 0);
        if (side === "buy") assert.ok(compare(fill.price, limit) <= 0);
        else assert.ok(compare(fill.price, limit) >= 0);
      },
    ),
  );
});
