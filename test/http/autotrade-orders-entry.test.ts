import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { settleAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  activeOf,
  type Following,
  followingAccount,
  heldAtBroker,
  historyOf,
  manualOrder,
  positionsOf,
  sendManual,
  storedOrders,
  strategyTrades,
} from "../helpers/autotrade-accounts.js";
import { assertRefused } from "../helpers/refusals.js";
import { ADMIN_KEY, BACKENDS, type CallResult, type Population, type TestService } from "../helpers/service.js";
import { setQuote } from "../helpers/trading.js";

/**
 * NewAutotradeOrder, CancelAutotradeOrder and ReplaceAutotradeOrder over
 * HTTP: manual exit orders in an autotraded account, reaching the simulated
 * broker through the desk, and kept from selling more than the setup holds
 * together with the strategy's own exits.
 */
for (const backend of BACKENDS) {
  describe(`autotrade account order entry (${backend})`, () => {
    let service: TestService;
    let p: Population;

    /** B's account, holding 50 AAPL bought at 200.1 by a copy of the strategy's buy of 100. */
    const holding = async (extra: Record<string, unknown> = {}): Promise<Following> => {
      const following = await followingAccount(service, p, { extra });
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      assert.deepEqual(await positionsOf(service, p, following.account).then((r) => r.map((x) => x.Quantity)), [50]);
      return following;
    };
    const newManual = (following: Following, order: Record<string, unknown> = {}, key = p.keys.personB) =>
      sendManual(service, key, manualOrder(p, following, order));
    const cancel = (following: Following, orderId: string | number, key = p.keys.personB) =>
      accountQuery(service, key, "DELETE", "CancelAutotradeOrder", {
        Account: following.account,
        PersonId: p.people.personB,
        OrderId: orderId,
      });
    const replace = async (following: Following, orderId: string | number, price: number | string) => {
      const r = await service.call("GEN", "PUT", "/Autotrade/ReplaceAutotradeOrder", {
        key: p.keys.personB,
        body: { Account: following.account, PersonId: p.people.personB, OrderId: String(orderId), Price: price },
      });
      await settleAutotrade(service);
      return r;
    };
    const ordersCount = async () =>
      Number(
        (
          await service.storage.db
            .selectFrom("account_orders")
            .select((eb) => eb.fn.countAll<number | string>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** The refusal leaves no account order behind. */
    const refusedWritingNothing = async (
      send: () => Promise<CallResult>,
      status: number,
      field: string,
      code: string,
    ) => {
      const before = await ordersCount();
      const r = await send();
      assertRefused(r, status, field, code);
      assert.equal(await ordersCount(), before, "a refused order stored nothing");
      return r;
    };

    before(async () => {
      ({ service, p } = await accountsService(backend, [["MSFT", 400, 400.2]]));
    });
    after(() => service.close());

    test("a manual limit exit rests at the broker, is listed as working and fills at its price", async () => {
      const following = await holding();
      const r = await newManual(following, { OrderQuantity: 20, Limit: 250 });
      assert.equal(r.status, 200, r.text);
      const result = r.json.Results[0];
      assert.deepEqual(
        { ...result, SignalId: typeof result.SignalId },
        {
          SignalId: "number",
          ProfitTargetSignalId: null,
          StopLossSignalId: null,
          ExitSignalsOCAGroupId: null,
          ParkedUntilDate: null,
        },
      );
      const [working] = (await activeOf(service, p, following.account)).filter(
        (o) => o.OrderId === String(result.SignalId),
      );
      assert.ok(working, "listed as working");
      assert.equal(working.Id, result.SignalId);
      assert.equal(working.SignalId, null, "a manual order copies no signal");
      assert.equal(working.OrderStatus, "0");
      assert.equal(working.OrderType, "2");
      assert.equal(working.Side, "2");
      assert.equal(working.OpenClose, "C");
      assert.equal(working.Limit, 250);
      assert.equal(working.OrderQuantity, 20);
      assert.equal(working.SignalType, 1);
      assert.equal(working.BrokerId, 1);
      assert.equal(working.StrategyId, following.strategyId);
      assert.equal(working.Info, "Manual exit order");
      await setQuote(service, "AAPL", 250, 250.1);
      await settleAutotrade(service);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
      assert.equal(await heldAtBroker(service, following.account), 30);
      const [filled] = (await historyOf(service, p, following.account, { OrderStatus: "2" })).filter(
        (o) => o.OrderId === String(result.SignalId),
      );
      assert.equal(filled?.FilledQuantity, 20);
      assert.equal(filled?.AvgFillPrice, 250);
      await setQuote(service, "AAPL", 200, 200.1);
    });

    test("a manual stop exit: the administrators of the account's owner may send it too, on every server", async () => {
      const following = await holding();
      for (const [server, key] of [
        ["WL", p.keys.wlAdminB],
        ["GEO", ADMIN_KEY],
        ["GEN", p.keys.personB],
      ] as const) {
        const r = await sendManual(
          service,
          key,
          manualOrder(p, following, { OrderType: "3", Stop: 150, OrderQuantity: 5, Limit: undefined }),
          server,
        );
        assert.equal(r.status, 200, `${server}: ${r.text}`);
      }
      const stops = (await activeOf(service, p, following.account)).filter((o) => o.OrderType === "3");
      assert.deepEqual(
        stops.map((o) => [o.Stop, o.OrderQuantity, o.OrderStatus]),
        [
          [150, 5, "0"],
          [150, 5, "0"],
          [150, 5, "0"],
        ],
      );
    });

    test("the manual exit and the strategy's exits together never close more than the setup holds", async () => {
      const following = await holding();
      const manual = await newManual(following, { OrderQuantity: 20, Limit: 250 });
      assert.equal(manual.status, 200, manual.text);
      // The strategy's stop for its whole position: the copy closes only what the manual exit leaves.
      await strategyTrades(service, p, following.strategyId, "sell", 100, { OrderType: "3", Stop: 180 });
      const exits = (await activeOf(service, p, following.account)).filter((o) => o.SignalId !== null);
      assert.deepEqual(
        exits.map((o) => [o.OrderQuantity, o.Stop, o.SignalType]),
        [[30, 180, 1]],
      );
      // Nothing is left to close: a further manual exit is refused, naming the quantity and the rule.
      const refused = await refusedWritingNothing(
        () => newManual(following, { OrderQuantity: 1, Limit: 251 }),
        409,
        "Order.OrderQuantity",
        "2010",
      );
      assert.deepEqual(refused.json.ResponseStatus.Errors[0].Meta, { Held: 50, Covered: 50, Closable: 0 });
      // Both fill: the account ends flat, never short.
      await setQuote(service, "AAPL", 179, 179.1);
      await settleAutotrade(service);
      await setQuote(service, "AAPL", 250, 250.1);
      await settleAutotrade(service);
      assert.deepEqual(await positionsOf(service, p, following.account), []);
      assert.equal(await heldAtBroker(service, following.account), 0);
      await setQuote(service, "AAPL", 200, 200.1);
    });

    test("a resting manual exit is counted by the copier: the strategy's close copies only the rest", async () => {
      const following = await holding();
      const manual = await newManual(following, { OrderQuantity: 20, Limit: 250 });
      assert.equal(manual.status, 200, manual.text);
      await strategyTrades(service, p, following.strategyId, "sell", 100);
      assert.deepEqual(await storedOrders(service, following.account), [
        "copy buy 50 market Filled",
        "manual sell 20 limit Working",
        "copy sell 30 market Filled",
      ]);
      assert.equal(await heldAtBroker(service, following.account), 20);
      // The customer takes the exit away while the strategy is flat: the desk's next pass closes the rest.
      const canceled = await cancel(following, manual.json.Results[0].SignalId);
      assert.equal(canceled.status, 200, canceled.text);
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { key: ADMIN_KEY, body: { Seconds: 1 } });
      await settleAutotrade(service);
      assert.equal(await heldAtBroker(service, following.account), 0);
      assert.deepEqual((await storedOrders(service, following.account)).slice(1), [
        "manual sell 20 limit Canceled",
        "copy sell 30 market Filled",
        "close sell 20 market Filled",
      ]);
    });

    test("a cancel: the order ends at the broker, leaves the working orders and shows in the history", async () => {
      const following = await holding();
      const placed = await newManual(following);
      const orderId = placed.json.Results[0].SignalId;
      const r = await cancel(following, orderId);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results[0].SignalId, orderId);
      assert.deepEqual(
        (await activeOf(service, p, following.account)).map((o) => o.OrderId),
        [],
      );
      const [ended] = (await historyOf(service, p, following.account, { OrderStatus: "4" })).filter(
        (o) => o.OrderId === String(orderId),
      );
      assert.equal(ended?.OrderStatus, "4");
      const atBroker = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select("status")
        .where("account", "=", following.account)
        .where("side", "=", "sell")
        .executeTakeFirstOrThrow();
      assert.equal(atBroker.status, "canceled");
      // Once ended, it is no longer open.
      await refusedWritingNothing(() => cancel(following, orderId), 409, "OrderId", "2011");
    });

    test("a replace gives a strategy exit's copy or a manual exit a new price at the broker, under the same OrderId", async () => {
      const following = await holding();
      await strategyTrades(service, p, following.strategyId, "sell", 40, { OrderType: "2", Limit: 260 });
      const [exit] = (await activeOf(service, p, following.account)).filter((o) => o.SignalId !== null);
      assert.equal(exit?.Limit, 260);
      const r = await replace(following, exit?.OrderId as string, 255.5);
      assert.equal(r.status, 200, r.text);
      assert.equal(String(r.json.Results[0].SignalId), exit?.OrderId);
      const [moved] = (await activeOf(service, p, following.account)).filter((o) => o.OrderId === exit?.OrderId);
      assert.equal(moved?.Limit, 255.5);
      assert.equal(moved?.OrderStatus, "0");
      const atBroker = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select(["limit_price", "broker_order_id", "id"])
        .where("account", "=", following.account)
        .where("side", "=", "sell")
        .executeTakeFirstOrThrow();
      assert.equal(atBroker.limit_price, "255.5");
      assert.equal(atBroker.broker_order_id, `${atBroker.id}-R1`);
      // A manual stop exit, repriced as numeric text.
      const manual = await newManual(following, { OrderType: "3", Stop: 150, Limit: undefined, OrderQuantity: 5 });
      const repriced = await replace(following, manual.json.Results[0].SignalId, "160.25");
      assert.equal(repriced.status, 200, repriced.text);
      const [stop] = (await activeOf(service, p, following.account)).filter(
        (o) => o.OrderId === String(manual.json.Results[0].SignalId),
      );
      assert.equal(stop?.Stop, 160.25);
      // A new price the market has reached fills at once.
      const filling = await replace(following, exit?.OrderId as string, 199);
      assert.equal(filling.status, 200, filling.text);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
    });

    test("the automatic stop loss cannot be canceled nor repriced; an opening copy takes no new price", async () => {
      const following = await holding({ AutoStopLossDollars: 100 });
      await strategyTrades(service, p, following.strategyId, "buy", 10, { OrderType: "2", Limit: 150 });
      const active = await activeOf(service, p, following.account);
      const autoStop = active.find((o) => o.Info === "Automatic stop loss (AutoStopLossDollars)");
      const opening = active.find((o) => o.OpenClose === "O");
      assert.ok(autoStop && opening, JSON.stringify(active));
      assert.equal(autoStop.SignalType, 5);
      assert.equal(autoStop.SignalId, null);
      const refusedCancel = await refusedWritingNothing(
        () => cancel(following, autoStop.OrderId as string),
        409,
        "OrderId",
        "1202",
      );
      assert.match(refusedCancel.json.ResponseStatus.Errors[0].Message, /automatic stop loss/);
      await refusedWritingNothing(() => replace(following, autoStop.OrderId as string, 190), 409, "OrderId", "1202");
      const refusedOpening = await refusedWritingNothing(
        () => replace(following, opening.OrderId as string, 151),
        409,
        "OrderId",
        "1202",
      );
      assert.match(
        refusedOpening.json.ResponseStatus.Errors[0].Message,
        /Only strategy exit orders and manual exit orders/,
      );
      // Both still work as they did.
      const after = await activeOf(service, p, following.account);
      assert.deepEqual(
        after.map((o) => [o.OrderId, o.OrderStatus, o.Limit ?? o.Stop]),
        active.map((o) => [o.OrderId, o.OrderStatus, o.Limit ?? o.Stop]),
      );
      // The opening copy may be canceled: it is the customer's account.
      const canceled = await cancel(following, opening.OrderId as string);
      assert.equal(canceled.status, 200, canceled.text);
    });

    test("NewAutotradeOrder's refusals name the rule and the field, and store nothing", async () => {
      const following = await holding();
      const send =
        (order: Record<string, unknown>, extra: Record<string, unknown> = {}, key = p.keys.personB) =>
        () =>
          sendManual(service, key, manualOrder(p, following, order, extra));
      const market = await refusedWritingNothing(
        send({ OrderType: "1", Limit: undefined }),
        400,
        "Order.OrderType",
        "1101",
      );
      assert.match(market.json.ResponseStatus.Errors[0].Message, /Limit \(2\) and Stop \(3\) orders only/);
      const opening = await refusedWritingNothing(send({ OpenClose: "O" }), 400, "Order.OpenClose", "1101");
      assert.match(opening.json.ResponseStatus.Errors[0].Message, /closing orders only/);
      await refusedWritingNothing(send({ ProfitTarget: 300 }), 400, "Order.ProfitTarget", "1101");
      await refusedWritingNothing(send({ ParentSignalId: 1 }), 400, "Order.ParentSignalId", "1101");
      await refusedWritingNothing(send({ Limit: undefined }), 400, "Order.Limit", "1102");
      await refusedWritingNothing(send({ Limit: 250.003 }), 400, "Order.Limit", "1101");
      await refusedWritingNothing(send({ OrderQuantity: 2.5 }), 400, "Order.OrderQuantity", "1101");
      await refusedWritingNothing(
        send({ ServiceSymbol: { FullSymbol: "NOPE123" } }),
        400,
        "Order.ServiceSymbol",
        "1121",
      );
      const wrongSide = await refusedWritingNothing(send({ Side: "1" }), 409, "Order.Side", "2010");
      assert.match(wrongSide.json.ResponseStatus.Errors[0].Message, /long 50 AAPL: its closing order sells/);
      const nothing = await refusedWritingNothing(
        send({ ServiceSymbol: { FullSymbol: "MSFT" }, Limit: 500 }),
        409,
        "Order.ServiceSymbol",
        "2010",
      );
      assert.match(nothing.json.ResponseStatus.Errors[0].Message, /holds no MSFT/);
      await refusedWritingNothing(
        send({ ExchangeSymbol: { Symbol: "MSFT", SecurityType: "CS" }, ServiceSymbol: undefined, Limit: 500 }),
        409,
        "Order.ExchangeSymbol",
        "2010",
      );
      await refusedWritingNothing(send({ OrderQuantity: 51 }), 409, "Order.OrderQuantity", "2010");
      const other = await followingAccount(service, p);
      await refusedWritingNothing(send({ StrategyId: other.strategyId }), 404, "Order.StrategyId", "2013");
      await refusedWritingNothing(send({}, { Account: `${other.account}X` }), 404, "Account", "2013");
      // A's account? B's number is not A's: 404; B naming A is 403 on PersonId.
      await refusedWritingNothing(send({}, { PersonId: p.people.personA }, ADMIN_KEY), 404, "Account", "2013");
      await refusedWritingNothing(send({}, { PersonId: p.people.personA }), 403, "PersonId", "1002");
      await refusedWritingNothing(send({}, {}, p.keys.personA), 403, "PersonId", "1002");
      await refusedWritingNothing(send({}, {}, p.keys.wlAdminA), 403, "PersonId", "1002");
      await refusedWritingNothing(send({}, { BrokerId: 2 }), 404, "Account", "2013");
    });

    test("a stop requested on the setup refuses new manual orders", async () => {
      const following = await holding();
      const stopped = await accountQuery(service, ADMIN_KEY, "DELETE", "StopAutotrade", {
        Account: following.account,
        PersonId: p.people.personB,
        StrategyId: following.strategyId,
        BrokerId: 1,
        LeavePositionsOpen: "true",
      });
      assert.equal(stopped.status, 200, stopped.text);
      await refusedWritingNothing(
        () => sendManual(service, p.keys.personB, manualOrder(p, following)),
        409,
        "Order.StrategyId",
        "1202",
      );
    });

    test("Cancel and Replace refusals name OrderId or Price, and change nothing", async () => {
      const following = await holding();
      const manual = await newManual(following);
      const orderId = String(manual.json.Results[0].SignalId);
      const [copy] = await historyOf(service, p, following.account, { OrderStatus: "2" });
      await refusedWritingNothing(() => cancel(following, "12ab"), 400, "OrderId", "1101");
      await refusedWritingNothing(() => cancel(following, 987654), 404, "OrderId", "2013");
      await refusedWritingNothing(() => cancel(following, copy?.OrderId as string), 409, "OrderId", "2011");
      await refusedWritingNothing(() => replace(following, copy?.OrderId as string, 201), 409, "OrderId", "1202");
      await refusedWritingNothing(() => replace(following, orderId, 250.005), 400, "Price", "1101");
      await refusedWritingNothing(() => replace(following, orderId, 0), 400, "Price", "1101");
      await refusedWritingNothing(() => replace(following, orderId, 250), 400, "Price", "1101");
      await refusedWritingNothing(() => replace(following, orderId, "abc"), 400, "Price", "1101");
      // Another's account does not have it.
      const other = await followingAccount(service, p);
      await refusedWritingNothing(
        () =>
          accountQuery(service, p.keys.personB, "DELETE", "CancelAutotradeOrder", {
            Account: other.account,
            PersonId: p.people.personB,
            OrderId: orderId,
          }),
        404,
        "OrderId",
        "2013",
      );
      await refusedWritingNothing(() => cancel(following, orderId, p.keys.personA), 403, "PersonId", "1002");
      const [still] = (await activeOf(service, p, following.account)).filter((o) => o.OrderId === orderId);
      assert.deepEqual([still?.OrderStatus, still?.Limit], ["0", 250]);
    });

    test("a repeated NewAutotradeOrder under its Idempotency-Key answers the first order and sends nothing more", async () => {
      const following = await holding();
      const headers = { "Idempotency-Key": `manual-${backend}-1` };
      const first = await sendManual(service, p.keys.personB, manualOrder(p, following), "GEN", headers);
      const again = await sendManual(service, p.keys.personB, manualOrder(p, following), "GEN", headers);
      assert.equal(first.status, 200, first.text);
      assert.equal(again.text, first.text);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.deepEqual(await storedOrders(service, following.account), [
        "copy buy 50 market Filled",
        "manual sell 10 limit Working",
      ]);
    });
  });
}
