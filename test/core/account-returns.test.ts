import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type AccountNow, type MarkFill, markAccountAt } from "../../src/core/autotrade/account-marks.js";
import { setupReturns } from "../../src/core/autotrade/account-returns.js";
import { add, decimal, formatDecimal, fromInteger, isZero, ONE, ZERO } from "../../src/core/decimal.js";
import { applyFill, FLAT, openProfit } from "../../src/core/positions.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";

const d = decimal;
const AAPL = fromServiceSymbol("AAPL", "stock") as Instrument;
const text = (value: ReturnType<typeof d> | null) => (value === null ? null : formatDecimal(value));
const at = (mid: string) => ({ mid: () => d(mid), usdRate: () => ONE });

/** B's account of 100,000 dollars: a copy bought 50 AAPL at 200.1 (time 10) for strategy 7. */
const bought: MarkFill = {
  strategyId: 7,
  instrument: AAPL,
  side: "buy",
  quantity: d("50"),
  price: d("200.1"),
  filledAt: 10,
};
const account = (over: Partial<AccountNow> = {}): AccountNow => ({
  cash: d("89995"),
  positions: [{ instrument: AAPL, quantity: d("50") }],
  books: [{ strategyId: 7, held: [{ instrument: AAPL, quantity: d("50") }], previous: null }],
  fills: [bought],
  sinceMs: 0,
  ...over,
});

test("an account at a close: the broker's cash and positions at the close's middle prices, each setup's P&L", () => {
  // Worked by hand: 50 × 205 = 10,250 held; 89,995 + 10,250 = 100,245; P&L 10,250 − 10,005 = 245.
  const mark = markAccountAt(account(), 100, at("205"));
  assert.deepEqual(
    mark && {
      value: text(mark.value),
      cash: text(mark.cash),
      books: mark.books.map((b) => [b.strategyId, text(b.holdingsValue), text(b.pnl)]),
    },
    { value: "100245", cash: "89995", books: [[7, "10250", "245"]] },
  );
});

test("what traded after the close is taken back out: the account as it stood at the close", () => {
  // Half sold at 214.9 after the close (time 200): now 95,367.5 cash and 25 held.
  const sold: MarkFill = { ...bought, side: "sell", quantity: d("25"), price: d("214.9"), filledAt: 200 };
  const now = account({
    cash: d("95367.5"),
    positions: [{ instrument: AAPL, quantity: d("25") }],
    books: [{ strategyId: 7, held: [{ instrument: AAPL, quantity: d("25") }], previous: null }],
    fills: [bought, sold],
  });
  const mark = markAccountAt(now, 100, at("205"));
  assert.deepEqual(mark && [text(mark.value), text(mark.books[0]?.pnl ?? null)], ["100245", "245"]);
  // The next close goes on from the first: 245 + 5,372.5 received + (25 × 215 − 10,250) = 742.5.
  const next = markAccountAt(
    {
      ...now,
      books: [
        {
          ...(now.books[0] as AccountNow["books"][number]),
          previous: { pnl: d("245"), holdingsValue: d("10250"), markedAt: 100 },
        },
      ],
    },
    300,
    at("215"),
  );
  assert.deepEqual(next && [text(next.value), text(next.books[0]?.pnl ?? null)], ["100742.5", "742.5"]);
});

test("a price or rate missing at the close leaves the account unmarked there", () => {
  assert.equal(markAccountAt(account(), 100, { mid: () => null, usdRate: () => ONE }), null);
  assert.equal(markAccountAt(account(), 100, { mid: () => d("205"), usdRate: () => null }), null);
  // Flat and nothing traded: nothing needs a price.
  const flat = account({
    positions: [],
    books: [{ strategyId: 7, held: [], previous: null }],
    fills: [],
    cash: d("100000"),
  });
  assert.deepEqual(
    markAccountAt(flat, 100, { mid: () => null, usdRate: () => ONE })?.books.map((b) => text(b.pnl)),
    ["0"],
  );
});

test("a paper reset: fills before it are not counted in a book marked for the first time", () => {
  const reset = account({
    sinceMs: 50,
    positions: [],
    books: [{ strategyId: 7, held: [], previous: null }],
    cash: d("100000"),
  });
  assert.deepEqual(
    markAccountAt(reset, 100, at("205"))?.books.map((b) => text(b.pnl)),
    ["0"],
  );
});

test("returns worked by hand: the day's P&L over the capital then, and since the start over the capital then", () => {
  const start = { pnl: ZERO, accountValue: d("100000") };
  const day1 = { pnl: d("245"), accountValue: d("100245") };
  const day2 = { pnl: d("495"), accountValue: d("100495") };
  const returns = (marks: (typeof day1)[]) => {
    const r = setupReturns({ scalingPercentage: d("50"), start, marks });
    return [text(r.today), text(r.total)];
  };
  assert.deepEqual(returns([]), [null, null]);
  // 245 / 50,000.
  assert.deepEqual(returns([day1]), ["0.0049", "0.0049"]);
  // 250 / 50,122.5 = 0.004987779... and 495 / 50,000.
  assert.deepEqual(returns([day1, day2]), ["0.00498778", "0.0099"]);
  // A setup started after a mark: its P&L and capital from then.
  const later = setupReturns({
    scalingPercentage: d("20"),
    start: { pnl: d("100"), accountValue: d("100245") },
    marks: [{ pnl: d("116"), accountValue: d("100511") }],
  });
  // 16 / 20,049 = 0.000798044...
  assert.deepEqual([text(later.today), text(later.total)], ["0.00079804", "0.00079804"]);
  // No capital, no return.
  const none = setupReturns({ scalingPercentage: d("50"), start: { pnl: ZERO, accountValue: ZERO }, marks: [day1] });
  assert.deepEqual([text(none.today), text(none.total)], [null, null]);
});

/**
 * The marks are the fills' cash flows marked to market however the closes
 * fall: the last mark's P&L is what the position's realized and open P&L say.
 */
test("the running P&L agrees with realized plus open P&L, whichever closes are marked", () => {
  const fill = fc.record({
    buy: fc.boolean(),
    quantity: fc.integer({ min: 1, max: 50 }),
    cents: fc.integer({ min: 100, max: 40000 }),
  });
  fc.assert(
    fc.property(
      fc.array(fill, { minLength: 1, maxLength: 20 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 25 }), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 100, max: 40000 }),
      (trades, marks, markCents) => {
        const fills: MarkFill[] = trades.map((t, i) => ({
          strategyId: 1,
          instrument: AAPL,
          side: t.buy ? "buy" : "sell",
          quantity: fromInteger(t.quantity),
          price: d((t.cents / 100).toFixed(2)),
          filledAt: i + 1,
        }));
        let position = FLAT;
        let realized = ZERO;
        for (const f of fills) {
          const change = applyFill(position, f.side, f.quantity, f.price, ONE);
          position = change.position;
          realized = add(realized, change.realized);
        }
        const mid = d((markCents / 100).toFixed(2));
        const closes = [...marks.map((m) => m + 0.5), fills.length + 0.5].sort((a, b) => a - b);
        let previous: AccountNow["books"][number]["previous"] = null;
        let last = ZERO;
        for (const close of closes) {
          const mark = markAccountAt(
            {
              cash: ZERO,
              positions: [],
              books: [
                {
                  strategyId: 1,
                  held: isZero(position.quantity) ? [] : [{ instrument: AAPL, quantity: position.quantity }],
                  previous,
                },
              ],
              fills,
              sinceMs: 0,
            },
            close,
            at(formatDecimal(mid)),
          );
          assert.ok(mark);
          const book = mark.books[0] as NonNullable<(typeof mark.books)[0]>;
          previous = { pnl: book.pnl, holdingsValue: book.holdingsValue, markedAt: close };
          last = book.pnl;
        }
        assert.equal(formatDecimal(last), formatDecimal(add(realized, openProfit(position, mid, ONE))));
      },
    ),
  );
});
