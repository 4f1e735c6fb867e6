import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { add, decimal, sub, toNumber, ZERO } from "../../src/core/decimal.js";
import { tradeStatistics } from "../../src/core/statistics.js";
import { SECURITY_TYPES, type SymbolType } from "../../src/core/symbols/instrument.js";
import { COPIER_CONSUMER } from "../../src/engine/autotrade/copier.js";
import { openFrame } from "../../src/engine/frame/open.js";
import { placeOrder } from "../../src/services/orders.js";
import { RECORDS_CONSUMER } from "../../src/store/migrations/0014_strategy_records.js";
import { strategyRecordTotals } from "../../src/store/strategy-records.js";
import { assertSucceeded, childEnv, onlyJson, spawnCli } from "../helpers/cli.js";
import { legacyCall, sitePlatform } from "../helpers/legacy.js";
import {
  accountOf,
  accountsBehind,
  assertEventsWithoutGap,
  assertRecordTotalsMatchHistory,
  consumersCaughtUp,
  eventsOf,
  recordTotalsOfHistory,
  type StoredEvent,
  storedRecordTotals,
} from "../helpers/outbox.js";
import {
  advanceClock,
  BACKENDS,
  freshStorage,
  populate,
  setClock,
  startTestService,
  type TestService,
  until,
} from "../helpers/service.js";
import { callerOf, orderInput } from "../helpers/services.js";
import {
  cancelOrder,
  MARKET_OPEN,
  newStrategy,
  placed,
  replaceOrder,
  setQuote,
  stockOrder,
} from "../helpers/trading.js";

/**
 * The order-event outbox (src/engine/outbox, src/engine/frame/journal-entry.ts)
 * and its records consumer, driven through the API as a client would, and
 * read from storage where the API shows nothing.
 */

const STATUS_OF_KIND: Readonly<Record<string, string>> = {
  partiallyFilled: "PartiallyFilled",
  filled: "Filled",
  canceled: "Canceled",
  replaced: "Replaced",
  expired: "Expired",
  rejected: "Rejected",
};
const TERMINAL_KINDS = new Set(["filled", "canceled", "replaced", "expired", "rejected"]);
/** The order state machine as events: what may follow what, for one order. */
const NEXT_KINDS: Readonly<Record<string, readonly string[]>> = {
  start: ["accepted"],
  // An order working at once is accepted Working; a held one (accepted PendingNew) starts with "working".
  accepted: ["working", "fill", "canceled", "replaced", "expired", "rejected"],
  working: ["fill", "canceled", "replaced", "expired"],
  fill: ["fill", "partiallyFilled", "filled", "canceled", "replaced", "expired"],
  partiallyFilled: ["fill", "canceled", "replaced", "expired"],
};

const kindsOf = (events: readonly StoredEvent[], orderId: number) =>
  events.filter((e) => e.orderId === orderId).map((e) => e.kind);
const eventOf = (events: readonly StoredEvent[], orderId: number, kind: string) => {
  const found = events.find((e) => e.orderId === orderId && e.kind === kind);
  assert.ok(found, `order ${orderId} has a ${kind} event`);
  return found;
};

/**
 * What holds of every account's outbox: seq 1..event_seq without a gap, each
 * order's events following the state machine, every fill stored once and
 * evented once, each status event carrying the status it names and what the
 * order's fills add up to, and each order's last status as stored.
 */
async function assertOutboxOfAccount(service: TestService, strategyId: number): Promise<StoredEvent[]> {
  const { events, account } = await assertEventsWithoutGap(service, strategyId);

  const fills = await service.storage.db
    .selectFrom("fills")
    .select(["order_id", "quantity", "price", "cash", "filled_at"])
    .where("account_id", "=", account.id)
    .orderBy("id")
    .execute();
  assert.deepEqual(
    events
      .filter((e) => e.kind === "fill")
      .map((e) => ({
        order_id: e.payload.order_id,
        quantity: e.payload.quantity,
        price: e.payload.price,
        cash: e.payload.cash,
        filled_at: e.payload.filled_at,
      })),
    fills,
    "every stored fill is one fill event, in the order stored",
  );

  const orders = await service.storage.db
    .selectFrom("orders")
    .select(["id", "status", "quantity", "filled_quantity"])
    .where("account_id", "=", account.id)
    .execute();
  for (const order of orders) {
    const mine = events.filter((e) => e.orderId === order.id);
    let last = "start";
    let filled = ZERO;
    let held = false;
    for (const event of mine) {
      assert.ok(
        NEXT_KINDS[last]?.includes(event.kind),
        `order ${order.id}: ${event.kind} may not follow ${last} (${mine.map((e) => e.kind).join(", ")})`,
      );
      if (event.kind === "accepted") {
        assert.equal(event.payload.id, order.id);
        assert.equal(event.payload.quantity, order.quantity);
        assert.ok(["Working", "PendingNew"].includes(event.payload.status), event.payload.status);
        assert.equal(event.payload.filled_quantity, "0", "accepted before any fill");
      }
      if (event.kind === "working") assert.equal(last === "accepted" && held, true, "only a held order starts working");
      if (event.kind === "fill" && last === "accepted") assert.equal(held, false, "a held order starts working first");
      if (event.kind === "accepted") held = event.payload.status === "PendingNew";
      if (event.kind === "fill") {
        assert.equal(event.payload.order_id, order.id);
        filled = add(filled, decimal(event.payload.quantity));
      }
      const status = STATUS_OF_KIND[event.kind];
      if (status) {
        assert.equal(event.payload.status, status, `order ${order.id}'s ${event.kind} event`);
        assert.equal(
          decimal(event.payload.filled_quantity),
          filled,
          `order ${order.id}'s ${event.kind} event carries what its fills add up to`,
        );
      }
      last = event.kind;
    }
    assert.ok(mine.length > 0, `order ${order.id} has events`);
    if (TERMINAL_KINDS.has(last)) assert.equal(order.status, STATUS_OF_KIND[last], `order ${order.id} as stored`);
    else assert.ok(["Working", "PartiallyFilled", "PendingNew"].includes(order.status), order.status);
    assert.equal(decimal(order.filled_quantity), filled, `order ${order.id}: stored filled quantity = its fill events`);
  }
  assert.deepEqual(
    [...new Set(events.map((e) => e.orderId))].sort((a, b) => (a as number) - (b as number)),
    orders.map((o) => o.id).sort((a, b) => a - b),
    "every event names one of the account's orders",
  );
  return events;
}

/** GetStrategyDetails' trade fields beside the same fields computed afresh from the stored trades and fills. */
/** Where the copier and the records consumer stand in the account's events (0: no position stored). */
async function positionsOf(service: TestService, accountId: number): Promise<[number, number]> {
  const rows = await service.storage.db
    .selectFrom("outbox_positions")
    .select(["consumer", "seq"])
    .where("account_id", "=", accountId)
    .execute();
  const at = (consumer: string) => rows.find((row) => row.consumer === consumer)?.seq ?? 0;
  return [at(COPIER_CONSUMER), at(RECORDS_CONSUMER)];
}

async function assertDetailsAgree(service: TestService, key: string, strategyId: number): Promise<void> {
  const r = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
    key,
    query: { StrategyId: String(strategyId) },
  });
  assert.equal(r.status, 200, r.text);
  const d = r.json.Results[0];
  const db = service.storage.db;
  const trades = await db
    .selectFrom("trades")
    .select(["opened_at", "closed_at", "realized", "commission"])
    .where("strategy_id", "=", strategyId)
    .where("closed_at", "is not", null)
    .execute();
  const fresh = tradeStatistics(
    trades.map((t) => ({
      openedAtMs: t.opened_at,
      closedAtMs: t.closed_at as number,
      profit: sub(decimal(t.realized), decimal(t.commission)),
    })),
  );
  const fills = await db
    .selectFrom("fills")
    .select(["symbol_type", "filled_at"])
    .where("strategy_id", "=", strategyId)
    .execute();
  const byKind = new Map<string, number>();
  for (const fill of fills) byKind.set(fill.symbol_type, (byKind.get(fill.symbol_type) ?? 0) + 1);
  const countOf = new Map([...byKind].map(([kind, n]) => [SECURITY_TYPES[kind as SymbolType] as string, n]));
  // The most traded first; kinds traded as often may come in either order.
  const answered = d.PrimarySecurityTypes as string[];
  assert.deepEqual([...answered].sort(), [...countOf.keys()].sort());
  const counts = answered.map((type) => countOf.get(type) as number);
  assert.deepEqual(
    counts,
    [...counts].sort((a, b) => b - a),
    `PrimarySecurityTypes ${answered} by fills ${counts}`,
  );
  const latest = fills.length === 0 ? null : Math.max(...fills.map((fill) => fill.filled_at));
  assert.deepEqual(
    {
      NumTrades: d.NumTrades,
      NumWinners: d.NumWinners,
      NumLosers: d.NumLosers,
      SumDollarWinners: d.SumDollarWinners,
      SumDollarLosers: d.SumDollarLosers,
      AvgTradeDuration: d.AvgTradeDuration,
      LatestTrade: d.LatestTrade === null ? null : Date.parse(d.LatestTrade),
    },
    {
      NumTrades: fresh.numTrades,
      NumWinners: fresh.numWinners,
      NumLosers: fresh.numLosers,
      SumDollarWinners: toNumber(fresh.sumDollarWinners),
      SumDollarLosers: toNumber(fresh.sumDollarLosers),
      AvgTradeDuration: fresh.avgTradeDuration,
      LatestTrade: latest,
    },
  );
}

for (const backend of BACKENDS) {
  describe(`the order-event outbox (${backend})`, () => {
    test("every order event and fill is in the outbox, numbered 1..event_seq per account, following the state machine", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        const owner = population.people.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);

        const resting = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 10, { OrderType: "2", Limit: 190 }),
        );
        const market = await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 5));
        assert.equal((await cancelOrder(service, key, strategyId, resting.SignalId)).status, 200);
        const bracket = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 10, { OrderType: "2", Limit: 199, ProfitTarget: 210, StopLoss: 190 }),
        );
        const target = bracket.ProfitTargetSignalId as number;
        const stop = bracket.StopLossSignalId as number;
        let events = await eventsOf(service, strategyId);
        assert.deepEqual(kindsOf(events, target), ["accepted"], "the exits are accepted with their entry and held");
        assert.deepEqual(kindsOf(events, stop), ["accepted"]);
        await setQuote(service, "AAPL", 198.9, 199);
        await setQuote(service, "AAPL", 210, 210.05);

        await setQuote(service, "MSFT", 400, 400.1, { askSize: 3 });
        const partial = await placed(service, key, stockOrder(strategyId, "MSFT", "buy", 10));
        await setQuote(service, "MSFT", 400.05, 400.1, { askSize: 7 });

        const replaced = await placed(
          service,
          key,
          stockOrder(strategyId, "MSFT", "buy", 10, { OrderType: "2", Limit: 390 }),
        );
        const replace = await replaceOrder(
          service,
          key,
          stockOrder(strategyId, "MSFT", "buy", 12, {
            OrderType: "2",
            Limit: 391,
            CancelReplaceSignalId: replaced.SignalId,
          }),
        );
        assert.equal(replace.status, 200, replace.text);
        const replacement = replace.json.Results[0].SignalId as number;
        const day = await placed(
          service,
          key,
          stockOrder(strategyId, "MSFT", "buy", 1, { OrderType: "2", Limit: 300, TIF: "0" }),
        );
        await setClock(service, "2026-03-10T20:30:00Z");

        events = await assertOutboxOfAccount(service, strategyId);
        assert.deepEqual(kindsOf(events, resting.SignalId), ["accepted", "canceled"]);
        assert.deepEqual(kindsOf(events, market.SignalId), ["accepted", "fill", "filled"]);
        assert.deepEqual(kindsOf(events, bracket.SignalId), ["accepted", "fill", "filled"]);
        assert.deepEqual(kindsOf(events, target), ["accepted", "working", "fill", "filled"]);
        assert.deepEqual(kindsOf(events, stop), ["accepted", "working", "canceled"]);
        assert.deepEqual(kindsOf(events, partial.SignalId), ["accepted", "fill", "partiallyFilled", "fill", "filled"]);
        assert.deepEqual(kindsOf(events, replaced.SignalId), ["accepted", "replaced"]);
        assert.deepEqual(kindsOf(events, replacement), ["accepted"]);
        assert.deepEqual(kindsOf(events, day.SignalId), ["accepted", "expired"]);

        // The exits start working in the operation that fills their entry: after its fill, before its status.
        const entryFill = eventOf(events, bracket.SignalId, "fill");
        const entryFilled = eventOf(events, bracket.SignalId, "filled");
        for (const exit of [target, stop]) {
          const working = eventOf(events, exit, "working");
          assert.ok(working.seq > entryFill.seq && working.seq > entryFilled.seq, `exit ${exit} works at the fill`);
          assert.equal(eventOf(events, exit, "accepted").payload.parent_id, bracket.SignalId);
        }
        // The stop loss is canceled by its OCA sibling's fill, in the same operation.
        assert.equal(eventOf(events, stop, "canceled").seq, eventOf(events, target, "filled").seq + 1);

        // A partial fill takes the quote's size; the rest fills on the next quote.
        assert.deepEqual(
          events.filter((e) => e.orderId === partial.SignalId && e.kind === "fill").map((e) => e.payload.quantity),
          ["3", "7"],
        );
        assert.equal(eventOf(events, partial.SignalId, "partiallyFilled").payload.filled_quantity, "3");

        // The replacement is accepted in the operation that ends the order it replaces.
        const accepted = eventOf(events, replacement, "accepted");
        assert.equal(accepted.payload.cancel_replace_id, replaced.SignalId);
        assert.equal(accepted.payload.quantity, "12");
        assert.equal(accepted.payload.limit_price, "391");
        assert.ok(Math.abs(eventOf(events, replaced.SignalId, "replaced").seq - accepted.seq) <= 2);

        // Who acted: the owner for what the owner sent (its own fills included), no one for the market and the clock.
        for (const event of events) assert.equal(event.onBehalfOfPersonId, null);
        for (const id of [resting.SignalId, market.SignalId, partial.SignalId, replaced.SignalId, day.SignalId]) {
          assert.equal(eventOf(events, id, "accepted").actorPersonId, owner);
        }
        assert.equal(
          eventOf(events, market.SignalId, "fill").actorPersonId,
          owner,
          "filled in the request that sent it",
        );
        assert.equal(eventOf(events, bracket.SignalId, "fill").actorPersonId, null, "filled by a quote");
        assert.equal(eventOf(events, day.SignalId, "expired").actorPersonId, null, "expired by the clock");
        assert.deepEqual(
          [...new Set(events.map((e) => e.payload.account_id ?? null).filter((id) => id !== null))],
          [(await accountOf(service, strategyId)).id],
        );
      } finally {
        await service.close();
      }
    });

    test("audit: a platform key or an administrator acting for the owner is the actor, on behalf of the owner; the owner alone is both", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        const { platformId, platformKey } = await sitePlatform(service, population);
        await setClock(service, MARKET_OPEN);
        const systemid = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const viaPlatform = await legacyCall(
          service,
          "submitSignal",
          { systemid, signal: { action: "BTO", quant: 3, symbol: "AAPL", typeofsymbol: "stock", market: 1 } },
          platformKey,
          `/platform/apiv3/${platformId}/submitSignal`,
        );
        assert.equal(viaPlatform.ok, 1, JSON.stringify(viaPlatform));
        const own = await legacyCall(
          service,
          "submitSignal",
          {
            systemid,
            signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock", limit: 150, duration: "GTC" },
          },
          key,
        );
        assert.equal(own.ok, 1, JSON.stringify(own));
        const v4 = await placed(service, key, stockOrder(systemid, "AAPL", "buy", 2, { OrderType: "2", Limit: 100 }));
        // Administrators trading the owner's strategy through v4 act for the owner too.
        const bySiteAdmin = await placed(
          service,
          population.keys.wlAdminA,
          stockOrder(systemid, "AAPL", "buy", 1, { OrderType: "2", Limit: 101 }),
        );
        const byServiceAdmin = await placed(
          service,
          population.keys.admin,
          stockOrder(systemid, "AAPL", "buy", 1, { OrderType: "2", Limit: 102 }),
        );

        const events = await assertOutboxOfAccount(service, systemid);
        const ofOrder = (id: number) => events.filter((e) => e.orderId === id);
        const platformEvents = ofOrder(Number(viaPlatform.signalid));
        assert.deepEqual(
          platformEvents.map((e) => e.kind),
          ["accepted", "fill", "filled"],
        );
        for (const event of platformEvents) {
          assert.equal(event.actorPersonId, population.people.wlAdminA, "the platform key's person acted");
          assert.equal(event.onBehalfOfPersonId, population.people.personA, "for the strategy's owner");
        }
        for (const event of [...ofOrder(Number(own.signalid)), ...ofOrder(v4.SignalId)]) {
          assert.equal(event.actorPersonId, population.people.personA);
          assert.equal(event.onBehalfOfPersonId, null);
        }
        for (const [order, admin] of [
          [bySiteAdmin.SignalId, population.people.wlAdminA],
          [byServiceAdmin.SignalId, population.people.admin],
        ] as const) {
          const [accepted] = ofOrder(order);
          assert.equal(accepted?.actorPersonId, admin);
          assert.equal(accepted?.onBehalfOfPersonId, population.people.personA, "an administrator acts for the owner");
        }
        const stored = await service.storage.db
          .selectFrom("order_events")
          .select(["actor_person_id", "on_behalf_of_person_id"])
          .where("order_id", "=", Number(viaPlatform.signalid))
          .where("kind", "=", "accepted")
          .executeTakeFirstOrThrow();
        assert.deepEqual(stored, {
          actor_person_id: population.people.wlAdminA,
          on_behalf_of_person_id: population.people.personA,
        });
      } finally {
        await service.close();
      }
    });

    test("the records consumer keeps each strategy's totals as its fills and trades say, and GetStrategyDetails agrees", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key, 200_000);
        const quiet = await newStrategy(service, key, 50_000, "Quiet Strategy");
        const buy = (symbol: string, quantity: number) =>
          placed(service, key, stockOrder(strategyId, symbol, "buy", quantity));
        const sell = (symbol: string, quantity: number) =>
          placed(service, key, stockOrder(strategyId, symbol, "sell", quantity));

        // Stocks: a winner, a loser, and a position still open (6 fills).
        await setQuote(service, "AAPL", 200, 200.05);
        await buy("AAPL", 10);
        await advanceClock(service, 600);
        await setQuote(service, "AAPL", 205, 205.05);
        await sell("AAPL", 10);
        await buy("AAPL", 5);
        await advanceClock(service, 300);
        await setQuote(service, "AAPL", 198, 198.05);
        await sell("AAPL", 5);
        await setQuote(service, "MSFT", 400, 400.1);
        await buy("MSFT", 10);
        await sell("MSFT", 4);
        // Forex: a winner in three fills, then a position left open (4 fills).
        await setQuote(service, "EURUSD", 1.085, 1.0851);
        await buy("EURUSD", 10_000);
        await buy("EURUSD", 10_000);
        await advanceClock(service, 60);
        await setQuote(service, "EURUSD", 1.0875, 1.0876);
        await sell("EURUSD", 20_000);
        await buy("EURUSD", 10_000);
        // Futures: a loser in three fills.
        await setQuote(service, "@ESM26", 5000, 5000.25);
        await buy("@ESM26", 1);
        await buy("@ESM26", 1);
        await advanceClock(service, 1200);
        await setQuote(service, "@ESM26", 4990, 4990.25);
        await sell("@ESM26", 2);
        // Options: a winner (2 fills).
        await setQuote(service, "AAPL261218C00150000", 10.5, 10.6);
        await buy("AAPL261218C00150000", 2);
        await advanceClock(service, 120);
        await setQuote(service, "AAPL261218C00150000", 12, 12.1);
        await sell("AAPL261218C00150000", 2);
        // The other strategy only rests an order: events, no fill.
        await placed(service, key, stockOrder(quiet, "AAPL", "buy", 1, { OrderType: "2", Limit: 100 }));

        await consumersCaughtUp([service]);
        for (const id of [strategyId, quiet]) {
          const account = await accountOf(service, id);
          const position = await service.storage.db
            .selectFrom("outbox_positions")
            .select("seq")
            .where("consumer", "=", "records")
            .where("account_id", "=", account.id)
            .executeTakeFirstOrThrow();
          assert.equal(position.seq, account.event_seq, "the records consumer stands at the account's last event");
          await assertOutboxOfAccount(service, id);
        }
        const expected = await recordTotalsOfHistory(service, strategyId);
        assert.deepEqual(
          [expected.fills_stock, expected.fills_forex, expected.fills_future, expected.fills_option],
          [6, 4, 3, 2],
        );
        assert.deepEqual([expected.closed_trades, expected.winners, expected.losers], [5, 3, 2]);
        assert.ok(expected.duration_ms > 0);
        assert.deepEqual(await storedRecordTotals(service, strategyId), expected);
        await assertRecordTotalsMatchHistory(service, quiet);
        assert.ok(await strategyRecordTotals(service.storage.db, strategyId), "details read the consumer's totals");
        await assertDetailsAgree(service, key, strategyId);
        const quietDetails = await service.call("GEN", "GET", "/Strategies/GetStrategyDetails", {
          key,
          query: { StrategyId: String(quiet) },
        });
        assert.deepEqual([quietDetails.json.Results[0].NumTrades, quietDetails.json.Results[0].LatestTrade], [0, null]);
      } finally {
        await service.close();
      }
    });

    test("a position past events that asked nothing waits: the records are still read, and a drain writes it", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 5));
        const filled = await accountOf(service, strategyId);
        // Each consumer reads the new account's first events from storage, beside the frame: a drain
        // may end before a read does, so this drains until both stand at the fill.
        await until(async () => {
          await service.app.runtime.frame.drain();
          const [copier, records] = await positionsOf(service, filled.id);
          return copier === filled.event_seq && records === filled.event_seq;
        });

        // A resting order asks nothing of the records, nor of the copier of a strategy no one follows.
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 100 }));
        const rested = await accountOf(service, strategyId);
        assert.ok(rested.event_seq > filled.event_seq);
        assert.deepEqual(await positionsOf(service, rested.id), [filled.event_seq, filled.event_seq], "they wait");
        assert.ok(
          await strategyRecordTotals(service.storage.db, strategyId),
          "no fill lies past the records' position",
        );
        await assertDetailsAgree(service, key, strategyId);

        await service.app.runtime.frame.drain();
        assert.deepEqual(
          await positionsOf(service, rested.id),
          [rested.event_seq, rested.event_seq],
          "a drain writes them",
        );

        // A fill past the stored position is not in the totals: the details read the fills and trades instead.
        const fill = (await eventsOf(service, strategyId)).find((event) => event.kind === "fill");
        assert.ok(fill);
        await service.storage.db
          .updateTable("outbox_positions")
          .set({ seq: fill.seq - 1 })
          .where("consumer", "=", "records")
          .where("account_id", "=", rested.id)
          .execute();
        assert.equal(await strategyRecordTotals(service.storage.db, strategyId), undefined);
        await assertDetailsAgree(service, key, strategyId);
      } finally {
        await service.close();
      }
    });

    test("a waiting position is written within outboxPositionsMs, with no drain", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" }, outboxPositionsMs: 20 });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: 100 }));
        const account = await accountOf(service, strategyId);
        let positions = await positionsOf(service, account.id);
        for (let round = 0; round < 200 && positions.some((seq) => seq !== account.event_seq); round++) {
          await sleep(10);
          positions = await positionsOf(service, account.id);
        }
        assert.deepEqual(positions, [account.event_seq, account.event_seq]);
      } finally {
        await service.close();
      }
    });

    test("resume: the history the CLI's demo commits without a consumer is consumed at the next start", async () => {
      const fresh = await freshStorage(backend);
      const run = await spawnCli(childEnv(fresh.env), ["demo", "--json"]);
      assertSucceeded(run);
      const demo = onlyJson(run);
      const strategies = (demo.Strategies as { Id: number; OwnerEmail: string }[]).map((s) => s.Id);
      for (const id of strategies) {
        const account = await fresh.storage.db
          .selectFrom("accounts")
          .select(["id", "event_seq"])
          .where("strategy_id", "=", id)
          .executeTakeFirstOrThrow();
        const position = await fresh.storage.db
          .selectFrom("outbox_positions")
          .select("seq")
          .where("account_id", "=", account.id)
          .executeTakeFirst();
        assert.ok(account.event_seq > 0 && (position?.seq ?? 0) < account.event_seq, "the demo's events wait");
      }
      const service = await startTestService(backend, { storage: fresh });
      try {
        await consumersCaughtUp([service]);
        for (const id of strategies) {
          await assertOutboxOfAccount(service, id);
          await assertRecordTotalsMatchHistory(service, id);
          const owner = demo.People.find(
            (p: { Email: string }) => p.Email === demo.Strategies.find((s: { Id: number }) => s.Id === id).OwnerEmail,
          );
          await assertDetailsAgree(service, owner.AccessKey, id);
        }
      } finally {
        await service.close();
      }
    });

    test("resume: events a frame without consumers commits are read from where the consumer stopped, each once", async () => {
      const fresh = await freshStorage(backend);
      let service = await startTestService(backend, { storage: fresh, marketFeed: { kind: "manual" } });
      const other = await fresh.openAnother();
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 10));
        await setQuote(service, "AAPL", 201, 201.05);
        await placed(service, key, stockOrder(strategyId, "AAPL", "sell", 10));
        await consumersCaughtUp([service]);
        const before = await accountOf(service, strategyId);
        assert.deepEqual((await storedRecordTotals(service, strategyId)).closed_trades, 1);

        // Another writer on the same database, with no outbox runner: a process that stops before consuming.
        const frame = openFrame(other);
        const ctx = { ...service.app.runtime, storage: other, frame, caller: await callerOf(service, key) };
        try {
          await placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", 4)));
          await setQuote(service, "AAPL", 199, 199.05);
          await placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "sell", 4)));
          await placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", 1)));
        } finally {
          await frame.close();
        }
        const after = await accountOf(service, strategyId);
        assert.ok(after.event_seq > before.event_seq);
        assert.deepEqual(await accountsBehind(service), [[after.id, after.event_seq, before.event_seq]]);

        service = await service.restart();
        await consumersCaughtUp([service]);
        await assertOutboxOfAccount(service, strategyId);
        const totals = await storedRecordTotals(service, strategyId);
        assert.deepEqual(totals, await recordTotalsOfHistory(service, strategyId));
        assert.deepEqual([totals.fills_stock, totals.closed_trades, totals.winners, totals.losers], [5, 2, 1, 1]);
      } finally {
        await other.close();
        await service.close();
      }
    });

    test("the events this process commits reach the consumer in memory: no read of the outbox per order", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        await setQuote(service, "AAPL", 200, 200.05);
        const strategyId = await newStrategy(service, key);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1));
        await consumersCaughtUp([service]);

        const db = service.storage.db;
        const selectFrom = db.selectFrom;
        let outboxReads = 0;
        db.selectFrom = ((from: Parameters<typeof selectFrom>[0]) => {
          if (String(from).startsWith("order_events")) outboxReads++;
          return selectFrom.call(db, from);
        }) as typeof selectFrom;
        try {
          for (let i = 0; i < 20; i++)
            await placed(service, key, stockOrder(strategyId, "AAPL", i % 2 ? "sell" : "buy", 1));
          await consumersCaughtUp([service]);
        } finally {
          db.selectFrom = selectFrom;
        }
        assert.equal(outboxReads, 0, "the consumer read the outbox from storage");
        await assertRecordTotalsMatchHistory(service, strategyId);
      } finally {
        await service.close();
      }
    });

    test("a consumer behind on an account catches up while orders keep coming to that account", async () => {
      const fresh = await freshStorage(backend);
      const service = await startTestService(backend, { storage: fresh, marketFeed: { kind: "manual" } });
      const other = await fresh.openAnother();
      let flowing = true;
      const flow: Promise<void>[] = [];
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        await setQuote(service, "AAPL", 200, 200.05);
        const strategyId = await newStrategy(service, key, 10_000_000);
        await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 1));
        await consumersCaughtUp([service]);

        // Events the service's consumer has not read, committed by a frame without consumers.
        const frame = openFrame(other);
        try {
          const ctx = { ...service.app.runtime, storage: other, frame, caller: await callerOf(service, key) };
          for (let i = 0; i < 3; i++) await placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", 1)));
        } finally {
          await frame.close();
        }
        const missed = (await accountOf(service, strategyId)).event_seq;

        // An order placed at every turn of the event loop: the frame is never idle while they flow.
        const ctx = { ...service.app.runtime, caller: await callerOf(service, key) };
        let outstanding = 0;
        const pump = () => {
          if (!flowing) return;
          if (outstanding < 64) {
            outstanding++;
            const order = placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", 1)));
            flow.push(order.then(() => void outstanding--));
          }
          setImmediate(pump);
        };
        pump();
        let position = 0;
        for (let round = 0; round < 1000 && position < missed; round++) {
          await sleep(10);
          const row = await service.storage.db
            .selectFrom("outbox_positions as p")
            .innerJoin("accounts as a", "a.id", "p.account_id")
            .select("p.seq")
            .where("a.strategy_id", "=", strategyId)
            .executeTakeFirst();
          position = row?.seq ?? 0;
        }
        assert.ok(position >= missed, `the consumer reached ${position} of ${missed} while orders flowed`);
        flowing = false;
        await Promise.all(flow);
        await consumersCaughtUp([service]);
        await assertRecordTotalsMatchHistory(service, strategyId);
      } finally {
        flowing = false;
        await Promise.allSettled(flow);
        await other.close();
        await service.close();
      }
    });

    test("two processes on one database: each event is counted once, whoever consumes it", async () => {
      const first = await startTestService(backend, { marketFeed: { kind: "manual" } });
      const second = await first.sibling();
      try {
        const population = await populate(first);
        const key = population.keys.personA;
        const services = [first, second];
        for (const service of services) await setClock(service, MARKET_OPEN);
        const shared = await newStrategy(first, key, 500_000, "Shared");
        const own = await newStrategy(second, key, 500_000, "Second's own");
        for (const service of services) {
          await setQuote(service, "AAPL", 200, 200.05);
          await setQuote(service, "@ESM26", 5000, 5000.25);
        }
        // Each cycle opens through both processes at once, then closes the same way: trades win and lose.
        for (let cycle = 0; cycle < 3; cycle++) {
          for (const side of ["buy", "sell"] as const) {
            await Promise.all(
              Array.from({ length: 8 }, (_, i) => {
                const via = services[i % 2] as TestService;
                return Promise.all([
                  placed(via, key, stockOrder(shared, "AAPL", side, 1)),
                  placed(via, key, stockOrder(shared, "@ESM26", side, 1)),
                  placed(services[(i + cycle) % 2] as TestService, key, stockOrder(own, "AAPL", side, 1)),
                ]);
              }),
            );
            const move = side === "buy" ? (cycle % 2 === 0 ? 3 : -3) : 0;
            for (const service of services) {
              await setQuote(service, "AAPL", 200 + move, 200.05 + move);
              await setQuote(service, "@ESM26", 5000 + move, 5000.25 + move);
            }
          }
        }
        await consumersCaughtUp(services);
        for (const id of [shared, own]) {
          await assertOutboxOfAccount(first, id);
          const expected = await recordTotalsOfHistory(first, id);
          assert.ok(expected.closed_trades > 0, "the scenario closes trades");
          assert.deepEqual(await storedRecordTotals(first, id), expected, "no event counted twice, none missed");
          await assertDetailsAgree(second, key, id);
        }
      } finally {
        await second.close();
        await first.close();
      }
    });

    if (backend === "postgres") {
      test("two processes reading an account's first events at once count them once", async () => {
        const fresh = await freshStorage(backend);
        const service = await startTestService(backend, { storage: fresh, marketFeed: { kind: "manual" } });
        const other = await fresh.openAnother();
        const blocking = await fresh.openAnother();
        try {
          const population = await populate(service);
          const key = population.keys.personA;
          await setClock(service, MARKET_OPEN);
          await setQuote(service, "AAPL", 200, 200.05);
          const strategyId = await newStrategy(service, key);
          // The account's first events, committed by a frame without consumers: no position is stored for them yet.
          const frame = openFrame(other);
          try {
            const ctx = { ...service.app.runtime, storage: other, frame, caller: await callerOf(service, key) };
            await placeOrder(ctx, orderInput(stockOrder(strategyId, "AAPL", "buy", 1)));
          } finally {
            await frame.close();
          }
          const account = await accountOf(service, strategyId);
          assert.deepEqual(await accountsBehind(service), [[account.id, account.event_seq, null]]);

          // A transaction holding the strategy's record row lines up the two processes' consumer commits behind it.
          let release = () => {};
          const released = new Promise<void>((resolve) => {
            release = resolve;
          });
          let holder = 0;
          const holding = new Promise<void>((held) => {
            void blocking.db
              .transaction()
              .execute(async (trx) => {
                await trx
                  .insertInto("strategy_records")
                  .values({
                    strategy_id: strategyId,
                    fills_stock: 0,
                    fills_option: 0,
                    fills_future: 0,
                    fills_forex: 0,
                    latest_fill_at: null,
                    closed_trades: 0,
                    winners: 0,
                    losers: 0,
                    sum_winners_cents: 0,
                    sum_losers_cents: 0,
                    duration_ms: 0,
                  })
                  .execute();
                holder = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid ?? 0;
                held();
                await released;
                throw new Error("rolled back");
              })
              .catch(() => undefined);
          });
          await holding;
          const [a, b] = await Promise.all([service.sibling(), service.sibling()]);
          try {
            let waiting = 0;
            for (let round = 0; round < 500 && waiting < 2; round++) {
              // Waiting on the holder, or on one that waits on it (the first to take the account's position).
              const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity s
                where ${holder} = any(pg_blocking_pids(s.pid)) or exists (
                  select 1 from pg_stat_activity t
                  where ${holder} = any(pg_blocking_pids(t.pid)) and t.pid = any(pg_blocking_pids(s.pid)))`.execute(
                service.storage.db,
              );
              waiting = r.rows[0]?.n ?? 0;
              if (waiting < 2) await sleep(10);
            }
            assert.equal(waiting, 2, "both new processes are committing what they read");
            release();
            await consumersCaughtUp([a, b]);
            await assertRecordTotalsMatchHistory(service, strategyId, "the account's fill is counted once");
          } finally {
            release();
            await b.close();
            await a.close();
          }
        } finally {
          await blocking.close();
          await other.close();
          await service.close();
        }
      });
    }
  });
}

for (const backend of BACKENDS) {
  describe(`order events as things happened (${backend})`, () => {
    test("an accepted event carries the order as it stood then: working, nothing filled yet", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const market = await placed(service, key, stockOrder(strategyId, "AAPL", "buy", 5));
        const events = await eventsOf(service, strategyId);
        assert.deepEqual(kindsOf(events, market.SignalId), ["accepted", "fill", "filled"]);
        const accepted = eventOf(events, market.SignalId, "accepted");
        assert.deepEqual(
          [accepted.payload.status, accepted.payload.filled_quantity, accepted.payload.filled_notional],
          ["Working", "0", "0"],
          "the fill comes after this event: its payload may not hold it already",
        );
        assert.deepEqual(eventOf(events, market.SignalId, "fill").payload.quantity, "5");
        assert.equal(eventOf(events, market.SignalId, "filled").payload.filled_quantity, "5");
      } finally {
        await service.close();
      }
    });

    test("a bracket's exits start working after the fill of their entry that lets them work", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const bracket = await placed(
          service,
          key,
          stockOrder(strategyId, "AAPL", "buy", 10, { OrderType: "2", Limit: 199, ProfitTarget: 210, StopLoss: 190 }),
        );
        await setQuote(service, "AAPL", 198.9, 199);
        const events = await eventsOf(service, strategyId);
        const entryFill = eventOf(events, bracket.SignalId, "fill");
        for (const exit of [bracket.ProfitTargetSignalId as number, bracket.StopLossSignalId as number]) {
          const working = eventOf(events, exit, "working");
          assert.ok(
            working.seq > entryFill.seq,
            `exit ${exit} works at seq ${working.seq}, its entry fills at seq ${entryFill.seq}: ${events.map((e) => `${e.seq} ${e.kind} ${e.orderId}`).join("; ")}`,
          );
        }
      } finally {
        await service.close();
      }
    });
  });
}
