import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { muxLocalId } from "../../src/core/mux.js";
import { linkVariant, MUX_CONSUMER } from "../../src/services/strategy-mux.js";
import { legacyCall } from "../helpers/legacy.js";
import {
  ADMIN_KEY,
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import {
  activeOrders,
  assertRefused,
  cancelOrder,
  MARKET_OPEN,
  newStrategy,
  placed,
  replaceOrder,
  setQuote,
  stockOrder,
} from "../helpers/trading.js";

/**
 * StrategyMux over HTTP: a parent's orders mirrored into its variants
 * through the trading frame (scaled, replaced, canceled, with exits, closes
 * in proportion), refusals in a variant kept as exceptions, chains,
 * GetStrategyMuxStatus and its refusals, and the mirror across restarts.
 */
for (const backend of BACKENDS) {
  describe(`StrategyMux (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let made = 0;

    /** Until the mirror has read every parent's events and the variants' orders are committed. */
    const settleMux = async () => {
      for (let i = 0; i < 3; i++) {
        service.app.mux.request();
        await service.app.mux.settled();
        await service.app.runtime.frame.drain();
      }
    };
    /** A strategy of person A's (a customer of site A). */
    const strategyOfA = async (capital = 100_000) => {
      made += 1;
      return newStrategy(service, p.keys.personA, capital, `Mux ${made}`);
    };
    const link = async (parentId: number, childId: number, scaling = "100") => {
      await linkVariant(service.app.runtime, { parentId, childId, scaling: decimal(scaling) });
      await settleMux();
    };
    /** A parent with variants at the given percentages. */
    const family = async (...scalings: string[]) => {
      const parent = await strategyOfA();
      const children: number[] = [];
      for (const scaling of scalings) {
        const child = await strategyOfA();
        await link(parent, child, scaling);
        children.push(child);
      }
      return { parent, children };
    };
    const trade = async (strategyId: number, side: "buy" | "sell", quantity: number, extra = {}) => {
      const order = await placed(service, p.keys.personA, stockOrder(strategyId, "AAPL", side, quantity, extra));
      await settleMux();
      return order;
    };
    const ordersOf = (strategyId: number) =>
      service.storage.db
        .selectFrom("orders")
        .select([
          "id",
          "side",
          "order_type",
          "quantity",
          "limit_price",
          "status",
          "local_signal_id",
          "signal_type",
          "parent_id",
        ])
        .where("strategy_id", "=", strategyId)
        .orderBy("id")
        .execute();
    const heldBy = async (strategyId: number) => {
      const row = await service.storage.db
        .selectFrom("positions")
        .select("quantity")
        .where("strategy_id", "=", strategyId)
        .where("symbol", "=", "AAPL")
        .executeTakeFirst();
      return row?.quantity ?? "0";
    };
    const status = (query: Record<string, string>, key = p.keys.wlAdminA) =>
      service.call("WL", "GET", "/Strategies/GetStrategyMuxStatus", { key, query });
    const familyStatus = async (parent: number) => {
      const r = await status({ StrategyId: String(parent) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.Results.length, 1);
      return r.json.Results[0];
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      p = await populate(service);
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(() => service.close());

    test("a parent's market order is mirrored into each variant, scaled; the family is in sync", async () => {
      const { parent, children } = await family("100", "50");
      const [full, half] = children as [number, number];
      const { SignalId } = await trade(parent, "buy", 100);
      assert.equal(await heldBy(full), "100");
      assert.equal(await heldBy(half), "50");
      const [mirror] = await ordersOf(half);
      assert.equal(mirror?.local_signal_id, muxLocalId(SignalId));
      assert.equal(mirror?.status, "Filled");
      const events = await service.storage.db
        .selectFrom("order_events")
        .innerJoin("accounts as a", "a.id", "order_events.account_id")
        .select(["actor_person_id"])
        .where("a.strategy_id", "=", half)
        .execute();
      assert.ok(events.length > 0 && events.every((e) => e.actor_person_id === null), "the mirror acts as no one");

      const s = await familyStatus(parent);
      assert.equal(s.WhiteLabelSiteId, p.siteA);
      assert.equal(s.PendingEvents, 0);
      assert.equal(s.VariantCount, 2);
      assert.equal(s.VariantsInSync, 2);
      assert.equal(s.ExceptionCount, 0);
      const second = s.Variants[1];
      assert.equal(second.ChildStrategyId, half);
      assert.equal(second.ScalingPercentage, 50);
      assert.equal(second.InSync, true);
      assert.equal(second.OrdersMirrored, 1);
      assert.ok(second.LastMirroredDate);
      assert.deepEqual(second.Positions, [
        {
          ServiceSymbol: second.Positions[0].ServiceSymbol,
          ParentQuantity: 100,
          ExpectedQuantity: 50,
          ChildQuantity: 50,
          Difference: 0,
          InSync: true,
        },
      ]);
      assert.equal(second.Positions[0].ServiceSymbol.FullSymbol, "AAPL");
    });

    test("a resting order is mirrored, its replacement replaces the mirror, and its cancel cancels it", async () => {
      const { parent, children } = await family("50");
      const half = children[0] as number;
      const { SignalId } = await trade(parent, "buy", 10, { OrderType: "2", Limit: 150 });
      assert.deepEqual(
        (await ordersOf(half)).map((o) => [o.order_type, o.quantity, o.limit_price, o.status]),
        [["limit", "5", "150", "Working"]],
      );
      const replaced = await replaceOrder(service, p.keys.personA, {
        ...stockOrder(parent, "AAPL", "buy", 20, { OrderType: "2", Limit: 151 }),
        CancelReplaceSignalId: SignalId,
      });
      assert.equal(replaced.status, 200, replaced.text);
      await settleMux();
      const newId = replaced.json.Results[0].SignalId;
      assert.deepEqual(
        (await ordersOf(half)).map((o) => [o.quantity, o.limit_price, o.status, o.local_signal_id]),
        [
          ["5", "150", "Replaced", muxLocalId(SignalId)],
          ["10", "151", "Working", muxLocalId(newId)],
        ],
      );
      const canceled = await cancelOrder(service, p.keys.personA, parent, newId);
      assert.equal(canceled.status, 200, canceled.text);
      await settleMux();
      assert.deepEqual(
        (await ordersOf(half)).map((o) => o.status),
        ["Replaced", "Canceled"],
      );
      const s = await familyStatus(parent);
      assert.equal(s.Variants[0].OrdersMirrored, 3);
      assert.equal(s.Variants[0].ExceptionCount, 0);
    });

    test("an entry with exits gives the variant its own exits; canceling the parent's stop loss cancels the variant's", async () => {
      const { parent, children } = await family("100");
      const child = children[0] as number;
      // Without an OCA group, so canceling one exit leaves the other working.
      const entry = await trade(parent, "buy", 10, {
        OrderType: "2",
        Limit: 150,
        ProfitTarget: 210,
        StopLoss: 140,
        DoNotCreateOCAGroup: true,
      });
      const mirrored = await ordersOf(child);
      assert.deepEqual(
        mirrored.map((o) => [o.signal_type, o.order_type, o.quantity, o.status]),
        [
          [1, "limit", "10", "Working"],
          [4, "limit", "10", "PendingNew"],
          [5, "stop", "10", "PendingNew"],
        ],
      );
      const canceled = await cancelOrder(service, p.keys.personA, parent, entry.StopLossSignalId as number);
      assert.equal(canceled.status, 200, canceled.text);
      await settleMux();
      assert.deepEqual(
        (await ordersOf(child)).map((o) => [o.signal_type, o.status]),
        [
          [1, "Working"],
          [4, "PendingNew"],
          [5, "Canceled"],
        ],
      );
      const active = await activeOrders(service, p.keys.personA, child);
      assert.equal(active.length, 2);
      // A new price for the parent's profit target reaches the variant's.
      const moved = await replaceOrder(service, p.keys.personA, {
        ...stockOrder(parent, "AAPL", "sell", 10, { OrderType: "2", Limit: 220 }),
        CancelReplaceSignalId: entry.ProfitTargetSignalId,
      });
      assert.equal(moved.status, 200, moved.text);
      await settleMux();
      assert.deepEqual(
        (await ordersOf(child)).filter((o) => o.signal_type === 4).map((o) => [o.limit_price, o.quantity, o.status]),
        [
          ["210", "10", "Replaced"],
          ["220", "10", "PendingNew"],
        ],
      );
    });

    test("closes follow in proportion, closing all closes the variant's all, and what rounds to nothing is skipped", async () => {
      const { parent, children } = await family("50");
      const half = children[0] as number;
      await trade(parent, "buy", 3);
      assert.equal(await heldBy(half), "1");
      await trade(parent, "sell", 1);
      assert.equal(await heldBy(half), "1", "a third of one share is nothing");
      const before = await familyStatus(parent);
      assert.equal(before.Variants[0].InSync, true, "2 at 50% is 1");
      await trade(parent, "sell", 2);
      assert.equal(await heldBy(parent), "0");
      assert.equal(await heldBy(half), "0");
      const s = await familyStatus(parent);
      assert.equal(s.Variants[0].InSync, true);
      assert.equal(s.Variants[0].ExceptionCount, 1);
      assert.deepEqual(s.Variants[0].ExceptionsByReason, [{ Reason: "rounds_to_zero", Count: 1 }]);
      const [skip] = s.Variants[0].RecentExceptions;
      assert.equal(skip.Action, "Place");
      assert.equal(skip.Status, "Skipped");
      assert.equal(skip.ChildSignalId, null);
    });

    test("a variant's refusal is an exception with its reason, and the family shows it out of sync", async () => {
      const parent = await strategyOfA();
      const poor = await strategyOfA(1_000);
      const rich = await strategyOfA();
      await link(parent, poor);
      await link(parent, rich);
      const { SignalId } = await trade(parent, "buy", 100);
      assert.equal(await heldBy(rich), "100");
      assert.equal(await heldBy(poor), "0");
      const s = await familyStatus(parent);
      assert.equal(s.VariantsInSync, 1);
      assert.equal(s.ExceptionCount, 1);
      const variant = s.Variants.find((v: { ChildStrategyId: number }) => v.ChildStrategyId === poor);
      assert.equal(variant.InSync, false);
      assert.deepEqual(variant.Positions[0].Difference, -100);
      assert.deepEqual(variant.ExceptionsByReason, [{ Reason: "NewOrderRejected", Count: 1 }]);
      assert.equal(variant.RecentExceptions[0].SignalId, SignalId);
      assert.equal(variant.RecentExceptions[0].Status, "Failed");
      assert.match(variant.RecentExceptions[0].Message, /buying power/);
      // A cancel of what was never mirrored is skipped, not an error.
      const resting = await trade(parent, "buy", 100, { OrderType: "2", Limit: 150 });
      const canceled = await cancelOrder(service, p.keys.personA, parent, resting.SignalId);
      assert.equal(canceled.status, 200, canceled.text);
      await settleMux();
      const after = (await familyStatus(parent)).Variants.find(
        (v: { ChildStrategyId: number }) => v.ChildStrategyId === poor,
      );
      assert.deepEqual(after.ExceptionsByReason, [
        { Reason: "NewOrderRejected", Count: 2 },
        { Reason: "not_mirrored", Count: 1 },
      ]);
    });

    test("orders before the link are not mirrored; a variant of a variant mirrors its mirrored orders", async () => {
      const parent = await strategyOfA();
      await trade(parent, "buy", 10);
      const child = await strategyOfA();
      const grandchild = await strategyOfA();
      await link(parent, child, "50");
      await link(child, grandchild, "200");
      assert.equal((await ordersOf(child)).length, 0);
      const before = await familyStatus(parent);
      assert.equal(before.Variants[0].InSync, false, "the parent's position from before is not the variant's");
      await trade(parent, "buy", 4);
      assert.equal(await heldBy(child), "2");
      assert.equal(await heldBy(grandchild), "4");
      const grand = await familyStatus(child);
      assert.equal(grand.Variants[0].ChildStrategyId, grandchild);
      assert.equal(grand.Variants[0].InSync, true);
    });

    test("an option held at expiry settles in the parent and in each variant on its own: nothing is mirrored", async () => {
      const { parent, children } = await family("50");
      const [half] = children as [number];
      const call = "AAPL260320C00150000";
      await setQuote(service, call, 5, 5.1);
      await placed(service, p.keys.personA, stockOrder(parent, call, "buy", 4));
      await settleMux();
      await setQuote(service, "AAPL", 159.9, 160.1);
      try {
        await setClock(service, "2026-03-21T04:00:00Z");
        await settleMux();
        const settlements = async (strategyId: number) =>
          (await ordersOf(strategyId))
            .filter((o) => o.signal_type === 7)
            .map((o) => `${o.side} ${o.quantity} ${o.status} ${o.local_signal_id}`);
        assert.deepEqual(await settlements(parent), ["sell 4 Filled null"]);
        assert.deepEqual(await settlements(half), ["sell 2 Filled null"], "the variant's own, not a mirror");
        const mirrored = await service.storage.db
          .selectFrom("mux_orders")
          .select(["action", "status"])
          .where("parent_strategy_id", "=", parent)
          .execute();
        assert.deepEqual(mirrored, [{ action: "place", status: "mirrored" }], "only the opening order");
      } finally {
        await setClock(service, MARKET_OPEN);
        await setQuote(service, "AAPL", 200, 200.1);
      }
    });

    test("a legacy client may not take a mirror's signal id (mux:...) for its own signals", async () => {
      const { children } = await family("100");
      for (const field of ["signalid", "ocaid"]) {
        const r = await legacyCall(
          service,
          "submitSignal",
          {
            systemid: children[0],
            signal: { action: "BTO", quant: 1, symbol: "AAPL", typeofsymbol: "stock", limit: 150, [field]: "mux:1" },
          },
          p.keys.personA,
        );
        assert.equal(r.ok, 0, JSON.stringify(r));
        assert.match(r.error.message, new RegExp(`signal.${field} may not begin with mux:`));
      }
      assert.deepEqual(await ordersOf(children[0] as number), []);
    });

    test("every family of the site, and the refusals of the status", async () => {
      const all = await status({});
      assert.equal(all.status, 200, all.text);
      assert.ok(all.json.Results.length >= 5);
      const ids = all.json.Results.map((f: { ParentStrategyId: number }) => f.ParentStrategyId);
      assert.deepEqual(
        ids,
        [...ids].sort((a: number, b: number) => a - b),
      );
      const byAdmin = await status({ WhiteLabelSiteId: String(p.siteA) }, ADMIN_KEY);
      assert.equal(byAdmin.json.Results.length, all.json.Results.length);
      const siteB = await status({}, p.keys.wlAdminB);
      assert.equal(siteB.status, 200, siteB.text);
      assert.deepEqual(siteB.json.Results, []);
      const someParent = String(ids[0]);
      assertRefused(await status({ StrategyId: someParent }, p.keys.wlAdminB), 404, "2013", "StrategyId");
      const lonely = await strategyOfA();
      const none = await status({ StrategyId: String(lonely) });
      assertRefused(none, 404, "2013", "StrategyId");
      assert.match(none.json.ResponseStatus.Errors[0].Message, /no variants/);
      assertRefused(await status({}, ADMIN_KEY), 400, "1102", "WhiteLabelSiteId");
      assertRefused(
        await status({ WhiteLabelSiteId: String(p.siteB) }, p.keys.wlAdminA),
        403,
        "1002",
        "WhiteLabelSiteId",
      );
      assertRefused(await status({}, p.keys.personA), 403, "1002");
      assertRefused(await status({}, p.keys.geoAdmin), 403, "1002");
    });

    test("a restart resumes the mirror where it stopped and never places a mirrored order twice", async () => {
      const { parent, children } = await family("100");
      const child = children[0] as number;
      const first = await trade(parent, "buy", 10, { OrderType: "2", Limit: 150 });
      assert.equal((await ordersOf(child)).length, 1);
      // As if the process died after the variant's order committed and before the mirror wrote anything of it.
      const account = await service.storage.db
        .selectFrom("accounts")
        .select(["id", "event_seq"])
        .where("strategy_id", "=", parent)
        .executeTakeFirstOrThrow();
      const accepted = await service.storage.db
        .selectFrom("order_events")
        .select("seq")
        .where("account_id", "=", account.id)
        .where("order_id", "=", first.SignalId)
        .where("kind", "=", "accepted")
        .executeTakeFirstOrThrow();
      await service.app.mux.stop();
      await service.storage.db
        .updateTable("outbox_positions")
        .set({ seq: accepted.seq - 1 })
        .where("consumer", "=", MUX_CONSUMER)
        .where("account_id", "=", account.id)
        .execute();
      await service.storage.db.deleteFrom("mux_orders").where("child_strategy_id", "=", child).execute();
      // And an order the mirror never saw before the process stopped.
      const second = await placed(
        service,
        p.keys.personA,
        stockOrder(parent, "AAPL", "buy", 5, { OrderType: "2", Limit: 149 }),
      );
      service = await service.restart();
      await settleMux();
      assert.deepEqual(
        (await ordersOf(child)).map((o) => [o.local_signal_id, o.quantity, o.status]),
        [
          [muxLocalId(first.SignalId), "10", "Working"],
          [muxLocalId(second.SignalId), "5", "Working"],
        ],
      );
      const outcomes = await service.storage.db
        .selectFrom("mux_orders")
        .select(["parent_order_id", "status", "message"])
        .where("child_strategy_id", "=", child)
        .orderBy("parent_order_id")
        .execute();
      assert.deepEqual(outcomes, [
        { parent_order_id: first.SignalId, status: "mirrored", message: "Mirrored before" },
        { parent_order_id: second.SignalId, status: "mirrored", message: null },
      ]);
      const position = await service.storage.db
        .selectFrom("outbox_positions")
        .select("seq")
        .where("consumer", "=", MUX_CONSUMER)
        .where("account_id", "=", account.id)
        .executeTakeFirstOrThrow();
      assert.equal(position.seq, account.event_seq + 1);
      // Mirrored again from the start: nothing new.
      await service.storage.db
        .updateTable("outbox_positions")
        .set({ seq: 0 })
        .where("consumer", "=", MUX_CONSUMER)
        .where("account_id", "=", account.id)
        .execute();
      await settleMux();
      assert.equal((await ordersOf(child)).length, 2);
      assert.equal((await familyStatus(parent)).Variants[0].OrdersMirrored, 2);
    });
  });
}
