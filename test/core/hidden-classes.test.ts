import assert from "node:assert/strict";
import { test } from "node:test";
import v8 from "node:v8";
import { decimal } from "../../src/core/decimal.js";
import { submit } from "../../src/core/orders/book.js";
import { exitTermsOf, type OrderTerms } from "../../src/core/orders/terms.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { payloadOf } from "../../src/engine/outbox/events.js";
import { readOrder } from "../../src/http/v4/orders-wire.js";
import type { NewFill, StoredOrder, StoredTrade } from "../../src/store/journal/batch.js";
import { ADMIN_KEY, BACKENDS, setClock, startTestService } from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The objects the order path makes for every order keep one hidden class
 * (docs/decisions.md, "Objects keep their hidden classes"): on Node 20's V8 an
 * object that adds a key after a spread gets a hidden class of its own each
 * time, once the spread's inline cache has settled, which cost several
 * microseconds per object and left every site reading such objects
 * megamorphic. Accounts and their states, copied from one another with every
 * operation, keep one class too: when they came in many, each key a copy
 * overrode was a store its inline cache missed. V8's own check tells; this
 * file's process alone turns it on.
 */
v8.setFlagsFromString("--allow-natives-syntax");
const sameHiddenClass = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

/** Whether two objects `make` makes share a hidden class, once it has run often enough for its caches to settle. */
function keepsHiddenClass(make: (i: number) => object): boolean {
  for (let i = 0; i < 50; i++) make(i);
  return sameHiddenClass(make(1), make(2));
}

const NOW = Date.parse("2026-03-10T14:00:00Z");
const AAPL = fromServiceSymbol("AAPL") as Instrument;

const order = (id: number): StoredOrder =>
  ({
    id,
    strategy_id: 7,
    account_id: 7,
    symbol: "AAPL",
    symbol_type: "stock",
    order_type: "limit",
    side: "buy",
    open_close: "open",
    tif: "gtc",
    quantity: "1",
    limit_price: "100",
    stop_price: null,
    status: "Working",
    filled_quantity: "0",
    filled_notional: "0",
    info: null,
  }) as unknown as StoredOrder;

const fill = (id: number): NewFill =>
  ({
    order_id: id,
    strategy_id: 7,
    account_id: 7,
    trade_id: 3,
    symbol: "AAPL",
    quantity: "1",
    price: "100",
    position_after: "0",
    filled_at: NOW,
  }) as unknown as NewFill;

const trade = { opened_at: NOW, closed_at: NOW, realized: "5", commission: "1" } as unknown as StoredTrade;

test("the check tells objects of different hidden classes apart", () => {
  assert.equal(sameHiddenClass({ a: 1 }, { b: 1 }), false);
  assert.equal(sameHiddenClass({ a: 1 }, { a: 2 }), true);
});

test("an order read from the wire keeps one hidden class", () => {
  const dto = (i: number) => ({
    StrategyId: i,
    OrderType: "2" as const,
    Side: "1" as const,
    TIF: "1" as const,
    OrderQuantity: 1,
    Limit: 100,
    ServiceSymbol: { FullSymbol: "AAPL" },
  });
  assert.ok(keepsHiddenClass((i) => readOrder(dto(i), NOW)));
});

test("each kind of event payload keeps one hidden class", () => {
  assert.ok(keepsHiddenClass((i) => payloadOf({ kind: "accepted", order: order(i), held: "0" })));
  assert.ok(keepsHiddenClass((i) => payloadOf({ kind: "working", order: order(i), held: "0" })));
  assert.ok(keepsHiddenClass((i) => payloadOf({ kind: "canceled", order: order(i) })));
  assert.ok(keepsHiddenClass((i) => payloadOf({ kind: "fill", order: order(i), fill: fill(i), closedTrade: trade })));
});

test("an entry's exits keep one hidden class each", () => {
  const entry = (i: number): OrderTerms => ({
    instrument: AAPL,
    type: "limit",
    side: "buy",
    openClose: "open",
    tif: "gtc",
    quantity: decimal(String(i + 1)),
    limit: decimal("100"),
    stop: null,
    profitTarget: decimal("110"),
    stopLoss: decimal("90"),
    signalType: 1,
  });
  assert.ok(keepsHiddenClass((i) => exitTermsOf(entry(i)).profitTarget as OrderTerms));
  assert.ok(keepsHiddenClass((i) => exitTermsOf(entry(i)).stopLoss as OrderTerms));
});

test("the events a book applies keep one hidden class", () => {
  const accepted = (i: number) => {
    const result = submit(new Map(), { id: i + 1, quantity: decimal("1") }, NOW);
    assert.ok(result.ok);
    return (result.events[0] as { event: object }).event;
  };
  assert.ok(keepsHiddenClass(accepted));
});

for (const backend of BACKENDS) {
  test(`accounts keep one hidden class, as loaded and after operations, and so do their states (${backend})`, async () => {
    const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
    try {
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 100, 100.05);
      const [loaded, resting, filled] = [
        await newStrategy(service, ADMIN_KEY),
        await newStrategy(service, ADMIN_KEY),
        await newStrategy(service, ADMIN_KEY),
      ];
      await placed(service, ADMIN_KEY, stockOrder(resting, "AAPL", "buy", 1, { OrderType: "2", Limit: 90 }));
      for (let i = 0; i < 20; i++)
        await placed(service, ADMIN_KEY, stockOrder(filled, "AAPL", i % 2 ? "sell" : "buy", 1));
      const { frame } = service.app.runtime;
      await frame.drain();
      const working = await Promise.all([loaded, resting, filled].map((id) => frame.workingAccount(id)));
      const [first, ...others] = working;
      for (const other of others) {
        assert.ok(sameHiddenClass(first as object, other), "working accounts");
        assert.ok(sameHiddenClass((first as typeof other).state, other.state), "trading states");
      }
      const committed = [...(await frame.committedAccounts([loaded, resting, filled])).values()];
      assert.equal(committed.length, 3);
      for (const other of committed.slice(1)) assert.ok(sameHiddenClass(committed[0] as object, other), "committed");
    } finally {
      await service.close();
    }
  });
}
