import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Caller } from "../../src/core/access.js";
import { cashOfFill, markPositions, openingRequirement, summarize } from "../../src/core/account.js";
import { COMMISSION_PLANS, type CommissionPlan, commission } from "../../src/core/commissions.js";
import {
  add,
  compare,
  type Decimal,
  decimal,
  formatDecimal,
  fromInteger,
  ONE,
  sub,
  ZERO,
} from "../../src/core/decimal.js";
import { Refusal } from "../../src/core/errors.js";
import { fillAgainst, type Quote, type Side } from "../../src/core/fills.js";
import type { MarketView } from "../../src/core/market/view.js";
import { fromServiceSymbol, type Instrument } from "../../src/core/symbols/instrument.js";
import { cancelOrder, placeOrder } from "../../src/services/orders.js";
import { modelAccount } from "../../src/services/trading.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { callerOf, orderInput } from "../helpers/services.js";
import {
  activeOrders,
  cancelOrder as cancelThrough,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  setQuote,
  stockOrder,
} from "../helpers/trading.js";

/**
 * The account-scoped trading frame (src/engine/frame) against the pure core:
 * random orders, cancels, hand quotes and clock moves on two strategies go
 * through the service's own functions, and after each one what the API and
 * the model account answer is compared with a reference model kept here with
 * the core's fill, commission and margin rules. At the end storage is
 * compared with what the frame holds, before and after a restart.
 */

const DEFAULT_PLAN = COMMISSION_PLANS[0] as CommissionPlan;
const SYMBOLS = ["AAPL", "MSFT"] as const;
type ModelSymbol = (typeof SYMBOLS)[number];
/** Each symbol's middle price in cents, around which hand quotes move. */
const BASE_CENTS: Readonly<Record<ModelSymbol, number>> = { AAPL: 20_000, MSFT: 40_000 };
const STARTING_CAPITAL = 100_000;
/** Commands in a run. */
const STEPS = 200;

const instrumentOf = (symbol: string): Instrument => {
  const instrument = fromServiceSymbol(symbol);
  assert.ok(instrument, symbol);
  return instrument;
};
const cents = (n: number): Decimal => decimal((n / 100).toFixed(2));

interface ModelOrder {
  readonly id: number;
  readonly strategy: number;
  readonly symbol: ModelSymbol;
  readonly side: Side;
  readonly quantity: number;
  /** null: a market order. */
  readonly limit: Decimal | null;
  status: "Working" | "Filled" | "Canceled";
  fills: number;
}

interface ModelStrategy {
  readonly id: number;
  cash: Decimal;
  /** Long positions only: the generator never sells more than is held and not already offered. */
  readonly positions: Map<ModelSymbol, number>;
}

interface Model {
  readonly strategies: ModelStrategy[];
  readonly orders: ModelOrder[];
  readonly quotes: Map<ModelSymbol, { bid: number; ask: number }>;
  refusals: number;
}

interface Real {
  service: TestService;
  readonly key: string;
  readonly caller: Caller;
}

const quoteOf = (model: Model, symbol: ModelSymbol): Quote => {
  const q = model.quotes.get(symbol);
  assert.ok(q);
  return { bid: cents(q.bid), ask: cents(q.ask), bidSize: null, askSize: null };
};

const marketOf = (model: Model): MarketView => ({
  quote: (instrument) => quoteOf(model, instrument.fullSymbol as ModelSymbol),
  isOpen: () => true,
  usdRate: () => ONE,
});

const held = (strategy: ModelStrategy, symbol: ModelSymbol) => strategy.positions.get(symbol) ?? 0;
const working = (model: Model, strategy: number) =>
  model.orders.filter((o) => o.strategy === strategy && o.status === "Working");
/** What a strategy may still sell of a symbol: its position less what its working sells offer. */
const sellable = (model: Model, strategy: number) => (symbol: ModelSymbol) =>
  held(model.strategies[strategy] as ModelStrategy, symbol) -
  working(model, strategy)
    .filter((o) => o.symbol === symbol && o.side === "sell")
    .reduce((sum, o) => sum + o.quantity, 0);

/** The core's fill of the order against the symbol's quote now, if it crosses. */
const crossing = (model: Model, order: ModelOrder) =>
  fillAgainst(
    {
      type: order.limit === null ? "market" : "limit",
      side: order.side,
      limit: order.limit,
      stop: null,
      leaves: fromInteger(order.quantity),
    },
    quoteOf(model, order.symbol),
  );

/** A fill as the core books it: the notional settles in cash, less the Default plan's commission. */
function fill(model: Model, order: ModelOrder, price: Decimal): void {
  const strategy = model.strategies[order.strategy] as ModelStrategy;
  const instrument = instrumentOf(order.symbol);
  const quantity = fromInteger(order.quantity);
  const cash = sub(
    cashOfFill(instrument, order.side, quantity, price, ZERO, ONE),
    commission(DEFAULT_PLAN, instrument, quantity, price),
  );
  strategy.cash = add(strategy.cash, cash);
  const position = held(strategy, order.symbol) + (order.side === "buy" ? order.quantity : -order.quantity);
  if (position === 0) strategy.positions.delete(order.symbol);
  else strategy.positions.set(order.symbol, position);
  order.status = "Filled";
  order.fills += 1;
}

/** Whether the core's buying-power rule refuses opening `quantity` at `price`: the margin it needs beyond the excess. */
function beyondBuyingPower(model: Model, strategy: number, symbol: ModelSymbol, quantity: number, price: Decimal) {
  const s = model.strategies[strategy] as ModelStrategy;
  const market = marketOf(model);
  const account = summarize(
    s.cash,
    markPositions(
      // Marks use the quote; the cost is read only where there is none.
      [...s.positions].map(([held, n]) => ({
        instrument: instrumentOf(held),
        position: { quantity: fromInteger(n), cost: ZERO },
      })),
      market,
    ),
  );
  const required = openingRequirement(instrumentOf(symbol), "buy", fromInteger(quantity), price, ONE);
  return compare(required, sub(account.equity, account.marginUsed)) > 0;
}

/** What storage holds of a strategy's account that a refusal may not change. */
async function traceOf(real: Real, strategyId: number) {
  await real.service.app.runtime.frame.drain();
  const db = real.service.storage.db;
  const account = await db
    .selectFrom("accounts")
    .select(["id", "version", "event_seq", "cash"])
    .where("strategy_id", "=", strategyId)
    .executeTakeFirstOrThrow();
  const count = async (table: "orders" | "fills") =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("account_id", "=", account.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const positionRows = await db
    .selectFrom("positions")
    .select(["symbol", "quantity", "cost"])
    .where("account_id", "=", account.id)
    .orderBy("symbol")
    .execute();
  return { account, orders: await count("orders"), fills: await count("fills"), positions: positionRows };
}

/** Runs a call the model says is refused: it must be, with this error, and leave storage as it was. */
async function refused(real: Real, strategyId: number, name: string, call: () => Promise<unknown>): Promise<void> {
  const before = await traceOf(real, strategyId);
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof Refusal, String(error));
    assert.equal(error.entries[0]?.name, name, error.message);
    return true;
  });
  assert.deepEqual(await traceOf(real, strategyId), before, "a refusal leaves no trace");
}

const contextOf = (real: Real) => ({ ...real.service.app.runtime, caller: real.caller });

/** What the API and the model account answer, beside the model. */
async function assertAnswersAgree(model: Model, real: Real): Promise<void> {
  for (const [index, strategy] of model.strategies.entries()) {
    const active = await activeOrders(real.service, real.key, strategy.id);
    assert.deepEqual(
      active.map((o) => o.SignalId as number).sort((a, b) => a - b),
      working(model, index).map((o) => o.id),
      `strategy ${strategy.id}'s active orders`,
    );
    for (const order of active) assert.deepEqual([order.OrderStatus, order.FilledQuantity], ["0", 0]);
    const open = await positions(real.service, real.key, strategy.id);
    assert.deepEqual(
      open.map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]).sort(),
      [...strategy.positions].sort(),
      `strategy ${strategy.id}'s positions`,
    );
    const account = await modelAccount(real.service.app.runtime, strategy.id);
    assert.equal(formatDecimal(account.cash), formatDecimal(strategy.cash), `strategy ${strategy.id}'s cash`);
  }
}

/** Storage beside what the frame holds, and both beside the model, once everything applied is committed. */
async function assertStorageAgrees(model: Model, real: Real): Promise<void> {
  const { frame } = real.service.app.runtime;
  await frame.drain();
  const db = real.service.storage.db;
  const ids = model.strategies.map((s) => s.id);
  const committed = await frame.committedAccounts(ids);
  for (const [index, strategy] of model.strategies.entries()) {
    const held = committed.get(strategy.id);
    assert.ok(held);
    const work = await frame.workingAccount(strategy.id);
    const account = await db
      .selectFrom("accounts")
      .selectAll()
      .where("strategy_id", "=", strategy.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [account.version, account.event_seq, account.cash],
      [held.version, held.eventSeq, formatDecimal(held.cash)],
      "the account as stored is the frame's committed account",
    );
    assert.equal(account.cash, formatDecimal(strategy.cash));
    assert.deepEqual(
      [formatDecimal(work.state.cash), work.eventSeq],
      [account.cash, account.event_seq],
      "nothing applied waits",
    );
    const events = await db
      .selectFrom("order_events")
      .select(["seq"])
      .where("account_id", "=", account.id)
      .orderBy("seq")
      .execute();
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
    );
    assert.equal(events.length, account.event_seq);

    const orders = await db
      .selectFrom("orders")
      .selectAll()
      .where("account_id", "=", account.id)
      .orderBy("id")
      .execute();
    const mine = model.orders.filter((o) => o.strategy === index);
    assert.deepEqual(
      orders.map((o) => [o.id, o.status, o.filled_quantity]),
      mine.map((o) => [o.id, o.status, o.status === "Filled" ? String(o.quantity) : "0"]),
      "every order accepted is stored once, with the status and fills the model gave it; nothing refused is",
    );
    const active = orders.filter((o) => o.status === "Working");
    assert.deepEqual(
      active,
      [...held.orders.values()].sort((a, b) => a.id - b.id),
      "the frame's live orders are the stored ones",
    );
    assert.deepEqual(
      [...work.state.book.values()]
        .filter((o) => o.state.status === "Working")
        .map((o) => o.id)
        .sort((a, b) => a - b),
      active.map((o) => o.id),
    );
    const stored = await db
      .selectFrom("positions")
      .selectAll()
      .where("account_id", "=", account.id)
      .orderBy("symbol")
      .execute();
    assert.deepEqual(
      stored,
      [...held.positions.values()].sort((a, b) => a.symbol.localeCompare(b.symbol)),
    );
    assert.deepEqual(
      stored.map((p) => [p.symbol, Number(p.quantity)]),
      [...strategy.positions].sort(),
    );
    const fills = await db
      .selectFrom("fills")
      .select(["order_id", "cash"])
      .where("account_id", "=", account.id)
      .execute();
    for (const order of mine) {
      assert.equal(
        fills.filter((f) => f.order_id === order.id).length,
        order.fills,
        `order ${order.id} filled ${order.fills} time(s)`,
      );
    }
    const flows = fills.reduce((sum, f) => add(sum, decimal(f.cash)), decimal(String(STARTING_CAPITAL)));
    assert.equal(formatDecimal(flows), account.cash, "cash = starting capital + the fills' cash");
  }
}

type Command = fc.AsyncCommand<Model, Real>;

class Place implements Command {
  constructor(
    readonly strategy: number,
    readonly symbol: ModelSymbol,
    readonly side: Side,
    readonly quantity: number,
    /** Cents from the side's touch (into the market when positive); null: a market order. */
    readonly offset: number | null,
  ) {}
  check(model: Model): boolean {
    return this.side === "buy" || sellable(model, this.strategy)(this.symbol) > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const free = sellable(model, this.strategy)(this.symbol);
    const quantity = this.side === "buy" ? this.quantity : 1 + ((this.quantity - 1) % free);
    const quote = model.quotes.get(this.symbol) as { bid: number; ask: number };
    const limitCents =
      this.offset === null ? null : this.side === "buy" ? quote.ask + this.offset : quote.bid - this.offset;
    const limit = limitCents === null ? null : cents(limitCents);
    const strategyId = (model.strategies[this.strategy] as ModelStrategy).id;
    const input = orderInput(
      stockOrder(
        strategyId,
        this.symbol,
        this.side,
        quantity,
        limitCents === null ? {} : { OrderType: "2", Limit: limitCents / 100 },
      ),
    );
    const price = limit ?? cents(this.side === "buy" ? quote.ask : quote.bid);
    if (this.side === "buy" && beyondBuyingPower(model, this.strategy, this.symbol, quantity, price)) {
      model.refusals += 1;
      await refused(real, strategyId, "NewOrderRejected", () => placeOrder(contextOf(real), input));
      return;
    }
    const placed = await placeOrder(contextOf(real), input);
    const order: ModelOrder = {
      id: placed.signalId,
      strategy: this.strategy,
      symbol: this.symbol,
      side: this.side,
      quantity,
      limit,
      status: "Working",
      fills: 0,
    };
    assert.ok(
      model.orders.every((o) => o.id < order.id),
      "ids grow",
    );
    model.orders.push(order);
    const crossed = crossing(model, order);
    if (crossed) fill(model, order, crossed.price);
    else assert.notEqual(order.limit, null, "a market order fills at once against a quote of unlimited size");
  }
  toString(): string {
    return `Place(${this.strategy}, ${this.symbol} ${this.side} ${this.quantity} ${this.offset === null ? "market" : `limit ${this.offset}`})`;
  }
}

/** A close larger than the position: refused (1101) and without trace. */
class OverSell implements Command {
  constructor(
    readonly strategy: number,
    readonly symbol: ModelSymbol,
    readonly extra: number,
  ) {}
  check(model: Model): boolean {
    return held(model.strategies[this.strategy] as ModelStrategy, this.symbol) > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const strategy = model.strategies[this.strategy] as ModelStrategy;
    const input = orderInput(stockOrder(strategy.id, this.symbol, "sell", held(strategy, this.symbol) + this.extra));
    model.refusals += 1;
    await refused(real, strategy.id, "InvalidValue", () => placeOrder(contextOf(real), input));
  }
  toString(): string {
    return `OverSell(${this.strategy}, ${this.symbol}, +${this.extra})`;
  }
}

type CancelTarget = "working" | "filled" | "canceled" | "foreign";

class Cancel implements Command {
  constructor(
    readonly strategy: number,
    readonly target: CancelTarget,
    readonly pick: number,
  ) {}
  #candidates(model: Model): ModelOrder[] {
    if (this.target === "foreign") return model.orders.filter((o) => o.strategy !== this.strategy);
    const status = ({ working: "Working", filled: "Filled", canceled: "Canceled" } as const)[this.target];
    return model.orders.filter((o) => o.strategy === this.strategy && o.status === status);
  }
  check(model: Model): boolean {
    return this.#candidates(model).length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const candidates = this.#candidates(model);
    const order = candidates[this.pick % candidates.length] as ModelOrder;
    const strategyId = (model.strategies[this.strategy] as ModelStrategy).id;
    const cancel = () => cancelOrder(contextOf(real), strategyId, order.id);
    if (this.target === "working") {
      const answer = await cancel();
      assert.equal(answer.signalId, order.id);
      order.status = "Canceled";
      return;
    }
    model.refusals += 1;
    // Another strategy's order is not found in this one; an ended order cannot be canceled.
    await refused(real, strategyId, this.target === "foreign" ? "NotFound" : "CancelRejected", cancel);
  }
  toString(): string {
    return `Cancel(${this.strategy}, ${this.target} #${this.pick})`;
  }
}

class SetQuote implements Command {
  constructor(
    readonly symbol: ModelSymbol,
    readonly offset: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const middle = BASE_CENTS[this.symbol] + this.offset;
    const quote = { bid: middle - 2, ask: middle + 3 };
    model.quotes.set(this.symbol, quote);
    await setQuote(real.service, this.symbol, quote.bid / 100, quote.ask / 100);
    for (const order of model.orders) {
      if (order.status !== "Working" || order.symbol !== this.symbol) continue;
      const crossed = crossing(model, order);
      if (crossed) fill(model, order, crossed.price);
    }
  }
  toString(): string {
    return `SetQuote(${this.symbol}, ${this.offset})`;
  }
}

class MoveClock implements Command {
  constructor(readonly seconds: number) {}
  check(): boolean {
    return true;
  }
  async run(_model: Model, real: Real): Promise<void> {
    await advanceClock(real.service, this.seconds);
  }
  toString(): string {
    return `MoveClock(${this.seconds})`;
  }
}

/** Each command, then the answers compared with the model. */
const checked = (command: Command): Command => ({
  check: (model) => command.check(model),
  async run(model, real) {
    await command.run(model, real);
    await assertAnswersAgree(model, real);
  },
  toString: () => command.toString(),
});

const strategyIndex = fc.integer({ min: 0, max: 1 });
const symbol = fc.constantFrom(...SYMBOLS);
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        strategyIndex,
        symbol,
        fc.constantFrom<Side>("buy", "sell"),
        fc.integer({ min: 1, max: 20 }),
        fc.option(fc.integer({ min: -300, max: 60 }), { freq: 2 }),
      )
      .map(([s, sym, side, n, offset]) => checked(new Place(s, sym, side, n, offset))),
  },
  {
    // Large enough to meet the buying-power rule now and then.
    weight: 1,
    arbitrary: fc
      .tuple(strategyIndex, symbol, fc.integer({ min: 100, max: 600 }), fc.option(fc.integer({ min: -50, max: 20 })))
      .map(([s, sym, n, offset]) => checked(new Place(s, sym, "buy", n, offset))),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(strategyIndex, symbol, fc.integer({ min: 1, max: 50 }))
      .map(([s, sym, n]) => checked(new OverSell(s, sym, n))),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        strategyIndex,
        fc.constantFrom<CancelTarget>("working", "working", "working", "filled", "canceled", "foreign"),
        fc.nat(),
      )
      .map(([s, target, pick]) => checked(new Cancel(s, target, pick))),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(symbol, fc.integer({ min: -400, max: 400 }))
      .map(([sym, offset]) => checked(new SetQuote(sym, offset))),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }).map((seconds) => checked(new MoveClock(seconds))) },
);

/** Two fresh strategies of one owner, with both symbols quoted. */
async function setUp(service: TestService): Promise<{ model: Model; real: Real }> {
  const population = await populate(service);
  const key = population.keys.personA;
  await setClock(service, MARKET_OPEN);
  const strategies: ModelStrategy[] = [];
  for (const name of ["Model A", "Model B"]) {
    const id = await newStrategy(service, key, STARTING_CAPITAL, name);
    strategies.push({ id, cash: decimal(String(STARTING_CAPITAL)), positions: new Map() });
  }
  const model: Model = { strategies, orders: [], quotes: new Map(), refusals: 0 };
  const real: Real = { service, key, caller: await callerOf(service, key) };
  for (const sym of SYMBOLS) await new SetQuote(sym, 0).run(model, real);
  return { model, real };
}

for (const backend of BACKENDS) {
  describe(`the trading frame against the core (${backend})`, () => {
    test("random orders, cancels, quotes and clock moves on two strategies: answers, storage and a restart agree with the model", async () => {
      let steps = 0;
      let refusals = 0;
      let canceled = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: STEPS, maxLength: STEPS }), async (commands) => {
          const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
          const { model, real } = await setUp(service);
          try {
            await fc.asyncModelRun(() => ({ model, real }), commands);
            await assertStorageAgrees(model, real);
            real.service = await real.service.restart();
            await assertAnswersAgree(model, real);
            await assertStorageAgrees(model, real);
            const live = model.orders.filter((o) => o.status === "Working").length;
            assert.equal(
              real.service.app.fillLoop.index.workingOrders,
              live,
              "the restarted index holds every working order",
            );
            steps += model.orders.length + model.refusals;
            canceled += model.orders.filter((o) => o.status === "Canceled").length;
            refusals += model.refusals;
          } finally {
            await real.service.close();
          }
        }),
        // A run is a few seconds of service: the failing seed and path are printed to replay rather than shrunk.
        { numRuns: 3, endOnFailure: true },
      );
      assert.ok(steps >= 150, `the runs placed and refused ${steps} orders`);
      assert.ok(refusals > 0 && canceled > 0, "the runs met refusals and cancels");
    });

    test("two processes on one strategy: interleaved orders and cancels lose no update and fill nothing twice", async () => {
      const first = await startTestService(backend, { marketFeed: { kind: "manual" } });
      const second = await first.sibling();
      const services = [first, second] as const;
      const via = (i: number) => services[i % 2] as TestService;
      try {
        const population = await populate(first);
        const key = population.keys.personA;
        for (const service of services) await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(first, key, 1_000_000, "Shared");
        for (const service of services) {
          await setQuote(service, "AAPL", 200, 200.05);
          await setQuote(service, "MSFT", 400, 400.1);
        }
        const acknowledged: number[] = [];
        const ok = (r: CallResult) => {
          assert.equal(r.status, 200, r.text);
          const id = r.json.Results[0].SignalId as number;
          acknowledged.push(id);
          return id;
        };
        const limit = (i: number, symbol: string, price: number) =>
          newOrder(via(i), key, stockOrder(strategyId, symbol, "buy", 1 + (i % 4), { OrderType: "2", Limit: price }));

        const resting = (
          await Promise.all(
            Array.from({ length: 12 }, (_, i) => limit(i, i % 3 === 0 ? "MSFT" : "AAPL", i % 3 === 0 ? 390 : 195)),
          )
        ).map(ok);
        // Market orders, cancels through the process that did not place the order, and new resting orders, all at once.
        const [markets, cancels, more] = await Promise.all([
          Promise.all(
            Array.from({ length: 10 }, (_, i) => newOrder(via(i), key, stockOrder(strategyId, "AAPL", "buy", 2))),
          ),
          Promise.all(resting.slice(0, 6).map((id, i) => cancelThrough(via(i + 1), key, strategyId, id))),
          Promise.all(
            Array.from({ length: 6 }, (_, i) => limit(i, i % 2 === 0 ? "MSFT" : "AAPL", i % 2 === 0 ? 391 : 196)),
          ),
        ]);
        const marketIds = markets.map(ok);
        for (const r of cancels) assert.equal(r.status, 200, r.text);
        const canceled = resting.slice(0, 6);
        const moreIds = more.map(ok);
        // Both processes see a quote that crosses every resting AAPL buy: their fill loops race for the same orders.
        await Promise.all(services.map((service) => setQuote(service, "AAPL", 194, 194.05)));
        // The same order canceled through both processes at once: one cancel lands, the other finds it canceled.
        const msft = [
          ...resting.filter((_, i) => i >= 6 && i % 3 === 0),
          ...moreIds.filter((_, i) => i % 2 === 0),
        ].slice(0, 3);
        const twice = await Promise.all(
          msft.map((id) => Promise.all(services.map((service) => cancelThrough(service, key, strategyId, id)))),
        );
        for (const [i, answers] of twice.entries()) {
          assert.deepEqual(
            answers.map((r) => r.status).sort(),
            [200, 409],
            `one cancel of order ${msft[i]} lands: ${answers.map((r) => r.text).join(" ")}`,
          );
          canceled.push(msft[i] as number);
        }
        // Closes through both processes, each within what is held.
        const sells = (
          await Promise.all(
            Array.from({ length: 6 }, (_, i) => newOrder(via(i), key, stockOrder(strategyId, "AAPL", "sell", 1))),
          )
        ).map(ok);

        for (const service of services) await service.app.runtime.frame.drain();
        // A read through each process, as a client's, brings each up to what the other committed.
        const answers = await Promise.all(services.map((service) => activeOrders(service, key, strategyId)));
        const db = first.storage.db;
        const orders = await db
          .selectFrom("orders")
          .select(["id", "symbol", "status", "quantity", "filled_quantity"])
          .where("strategy_id", "=", strategyId)
          .orderBy("id")
          .execute();
        const byId = new Map(orders.map((o) => [o.id, o]));
        for (const id of acknowledged) assert.ok(byId.has(id), `acknowledged order ${id} is stored`);
        for (const id of [...marketIds, ...sells]) assert.equal(byId.get(id)?.status, "Filled", `order ${id}`);
        for (const id of canceled) assert.equal(byId.get(id)?.status, "Canceled", `order ${id}`);
        for (const order of orders.filter((o) => o.symbol === "AAPL" && !canceled.includes(o.id))) {
          assert.equal(order.status, "Filled", `AAPL order ${order.id} crossed by the quote`);
        }
        const fills = await db
          .selectFrom("fills")
          .select(["order_id", "symbol", "side", "quantity", "cash"])
          .where("strategy_id", "=", strategyId)
          .execute();
        for (const order of orders) {
          const mine = fills.filter((f) => f.order_id === order.id);
          const filled = mine.reduce((sum, f) => add(sum, decimal(f.quantity)), ZERO);
          assert.ok(compare(filled, decimal(order.quantity)) <= 0, `order ${order.id} never fills beyond its quantity`);
          assert.equal(formatDecimal(filled), order.filled_quantity, `order ${order.id}'s fills`);
          assert.ok(mine.length <= 1, `order ${order.id} filled once against a quote of unlimited size`);
        }
        const held = new Map<string, Decimal>();
        for (const f of fills) {
          const signed = f.side === "buy" ? decimal(f.quantity) : sub(ZERO, decimal(f.quantity));
          held.set(f.symbol, add(held.get(f.symbol) ?? ZERO, signed));
        }
        const expectedPositions = [...held]
          .filter(([, q]) => q !== ZERO)
          .map(([symbol, q]) => [symbol, Number(formatDecimal(q))]);
        for (const service of services) {
          const open = await positions(service, key, strategyId);
          assert.deepEqual(
            open.map((p) => [p.ServiceSymbol.FullSymbol, p.Quantity]).sort(),
            expectedPositions.sort(),
            "positions are the sum of the fills, through either process",
          );
        }
        const account = await db
          .selectFrom("accounts")
          .select(["cash", "starting_cash"])
          .where("strategy_id", "=", strategyId)
          .executeTakeFirstOrThrow();
        assert.equal(
          account.cash,
          formatDecimal(fills.reduce((sum, f) => add(sum, decimal(f.cash)), decimal(account.starting_cash))),
          "cash = starting capital + the fills' cash",
        );
        const stillWorking = orders.filter((o) => o.status === "Working" || o.status === "PartiallyFilled");
        for (const [i, service] of services.entries()) {
          assert.deepEqual(
            (answers[i] as Record<string, unknown>[]).map((o) => o.SignalId as number).sort((a, b) => a - b),
            stillWorking.map((o) => o.id),
            "each process answers the working orders",
          );
          // A quote through every price lists what the index holds on each symbol.
          const indexed = ["AAPL", "MSFT"].flatMap(
            (symbol) =>
              service.app.fillLoop.index.crossing(symbol, decimal("1000000"), decimal("0.01")).get(strategyId) ?? [],
          );
          assert.deepEqual(
            [...indexed].sort((a, b) => a - b),
            stillWorking.map((o) => o.id),
            "each process's index holds exactly the working orders",
          );
          assert.equal(service.app.fillLoop.index.workingOrders, stillWorking.length);
        }
      } finally {
        await second.close();
        await first.close();
      }
    });
  });
}

for (const backend of BACKENDS) {
  describe(`quiet operations (${backend})`, () => {
    test("a trade's worst price seen is committed with the account's next batch, or at shutdown, not in a batch of its own", async () => {
      let service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10));
        const stored = async () => {
          const db = service.storage.db;
          const account = await db
            .selectFrom("accounts")
            .select("version")
            .where("strategy_id", "=", strategyId)
            .executeTakeFirstOrThrow();
          const trade = await db
            .selectFrom("trades")
            .select("mae_worst_price")
            .where("strategy_id", "=", strategyId)
            .executeTakeFirstOrThrow();
          return { version: account.version, worst: trade.mae_worst_price };
        };
        const opened = await stored();

        // The quote crosses no order: the fill loop only sees the open trade go under water.
        await setQuote(service, "AAPL", 195, 195.05);
        assert.deepEqual(await stored(), opened, "the worst price waits for the account's next batch");
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 150 }));
        assert.deepEqual(await stored(), { version: opened.version + 1, worst: "195" }, "and goes with it");

        await setQuote(service, "AAPL", 190, 190.05);
        service = await service.restart();
        assert.equal((await stored()).worst, "190", "a shutdown commits what waits");
      } finally {
        await service.close();
      }
    });
  });
}
