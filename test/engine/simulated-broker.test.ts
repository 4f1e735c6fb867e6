import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { type Decimal, decimal, formatDecimal } from "../../src/core/decimal.js";
import type { BrokerOrderRequest, BrokerReport } from "../../src/engine/brokers/port.js";
import { BrokerUnavailableError, type SimulatedBroker } from "../../src/engine/brokers/simulated.js";
import { createPerson } from "../../src/services/people.js";
import { openSimulatedBrokerAccount } from "../../src/services/simulated-accounts.js";
import { BACKENDS, startTestService, type TestService } from "../helpers/service.js";
import { MARKET_OPEN, setQuote } from "../helpers/trading.js";

/**
 * The simulated broker through the broker port, as the copier uses it: on
 * the whole service (its market data, its clock, its fill loop's quotes),
 * with reports heard as a listener hears them.
 */

const text = (value: Decimal | null) => (value === null ? null : formatDecimal(value));

/** A report with its decimals as text and without its times, for comparing. */
function plain(report: BrokerReport): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(report)) {
    if (name === "atMs" || name === "brokerId") continue;
    out[name] = typeof value === "bigint" ? text(value as Decimal) : value;
  }
  return out;
}

for (const backend of BACKENDS) {
  describe(`the simulated broker (${backend})`, () => {
    let service: TestService;
    let broker: SimulatedBroker;
    let reports: BrokerReport[];
    let personId = 0;
    let accounts = 0;
    let keys = 0;

    const listen = () => {
      reports = [];
      broker = service.app.brokers.simulated;
      broker.onReport((report) => reports.push(report));
    };
    const newAccount = async (cash = "100000") => {
      accounts += 1;
      const account = `SIM-${accounts}`;
      await openSimulatedBrokerAccount(service.app.runtime, {
        personId,
        brokerId: 1,
        account,
        cash: decimal(cash),
        paper: false,
      });
      return account;
    };
    const order = (account: string, fields: Partial<BrokerOrderRequest> = {}): BrokerOrderRequest => {
      keys += 1;
      return {
        brokerId: 1,
        account,
        idempotencyKey: `key-${keys}`,
        symbol: "AAPL",
        symbolType: "stock",
        side: "buy",
        orderType: "market",
        tif: "gtc",
        quantity: decimal("10"),
        limit: null,
        stop: null,
        asCfd: false,
        ...fields,
      };
    };
    const reportsOf = (key: string) =>
      reports.filter((r) => "idempotencyKey" in r && r.idempotencyKey === key).map(plain);
    const positionOf = async (account: string, symbol = "AAPL") =>
      text((await broker.positions({ brokerId: 1, account })).find((p) => p.symbol === symbol)?.quantity ?? null);

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
      personId = (
        await createPerson(service.app.runtime, {
          email: "broker-customer@example.com",
          firstName: "Bea",
          lastName: "Broker",
          role: "person",
        })
      ).personId;
      listen();
    });
    after(() => service.close());
    beforeEach(async () => {
      await setQuote(service, "AAPL", 200, 200.1);
      await broker.drain();
      reports.length = 0;
    });

    test("a market order is taken, acknowledged and filled at the ask; a sell at the bid", async () => {
      const account = await newAccount();
      const buy = order(account);
      const answer = await broker.place(buy);
      assert.equal(answer.ok, true);
      await broker.drain();
      const brokerOrderId = answer.ok ? answer.brokerOrderId : "";
      assert.deepEqual(reportsOf(buy.idempotencyKey), [
        { account, idempotencyKey: buy.idempotencyKey, brokerOrderId, kind: "acknowledged" },
        {
          account,
          idempotencyKey: buy.idempotencyKey,
          brokerOrderId,
          kind: "fill",
          fillId: `${brokerOrderId}-F0`,
          quantity: "10",
          price: "200.1",
        },
      ]);
      assert.equal(await positionOf(account), "10");
      const value = await broker.accountValue({ brokerId: 1, account });
      assert.equal(text(value.cash), "97999");
      assert.equal(text(value.netLiquidation), "99999.5");
      const sell = order(account, { side: "sell", quantity: decimal("4") });
      await broker.place(sell);
      await broker.drain();
      assert.deepEqual(
        reportsOf(sell.idempotencyKey).map((r) => [r.kind, r.price]),
        [
          ["acknowledged", undefined],
          ["fill", "200"],
        ],
      );
      assert.equal(await positionOf(account), "6");
    });

    test("the same key twice is one order, also placed at once and after a restart", async () => {
      const account = await newAccount();
      const request = order(account);
      const [first, second] = await Promise.all([broker.place(request), broker.place(request)]);
      assert.deepEqual(first, second);
      assert.deepEqual(await broker.place(request), first);
      await broker.drain();
      assert.equal(await positionOf(account), "10");
      const stored = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select("id")
        .where("idempotency_key", "=", request.idempotencyKey)
        .execute();
      assert.equal(stored.length, 1);
    });

    test("a second process placing the same key gets the same order", async () => {
      const account = await newAccount();
      const request = order(account, { orderType: "limit", limit: decimal("100") });
      const first = await broker.place(request);
      const sibling = await service.sibling();
      try {
        assert.deepEqual(await sibling.app.brokers.simulated.place(request), first);
        const again = order(account, { orderType: "limit", limit: decimal("100") });
        const [here, there] = await Promise.all([broker.place(again), sibling.app.brokers.simulated.place(again)]);
        assert.deepEqual(here, there);
      } finally {
        await sibling.close();
      }
      const stored = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select("id")
        .where("account", "=", account)
        .execute();
      assert.equal(stored.length, 2);
    });

    test("a limit order rests until a quote crosses it, then fills at the touch", async () => {
      const account = await newAccount();
      const request = order(account, { orderType: "limit", limit: decimal("199.5") });
      await broker.place(request);
      await broker.drain();
      assert.deepEqual(
        reportsOf(request.idempotencyKey).map((r) => r.kind),
        ["acknowledged"],
      );
      await setQuote(service, "AAPL", 199.3, 199.4);
      assert.deepEqual(
        reportsOf(request.idempotencyKey).map((r) => [r.kind, r.price]),
        [
          ["acknowledged", undefined],
          ["fill", "199.4"],
        ],
      );
    });

    test("a stop order executes once the touch reaches its price", async () => {
      const account = await newAccount();
      const request = order(account, { side: "sell", orderType: "stop", stop: decimal("195") });
      await broker.place(request);
      await setQuote(service, "AAPL", 196, 196.1);
      assert.deepEqual(
        reportsOf(request.idempotencyKey).map((r) => r.kind),
        ["acknowledged"],
      );
      await setQuote(service, "AAPL", 194.9, 195);
      assert.deepEqual(
        reportsOf(request.idempotencyKey).map((r) => [r.kind, r.price]),
        [
          ["acknowledged", undefined],
          ["fill", "194.9"],
        ],
      );
    });

    test("cancel ends a resting order; a filled order's cancel is rejected", async () => {
      const account = await newAccount();
      const resting = order(account, { orderType: "limit", limit: decimal("150") });
      await broker.place(resting);
      await broker.cancel({ brokerId: 1, account }, resting.idempotencyKey);
      assert.deepEqual(
        reportsOf(resting.idempotencyKey).map((r) => [r.kind, r.reason]),
        [
          ["acknowledged", undefined],
          ["canceled", null],
        ],
      );
      const filled = order(account);
      await broker.place(filled);
      await broker.drain();
      await broker.cancel({ brokerId: 1, account }, filled.idempotencyKey);
      assert.deepEqual(reportsOf(filled.idempotencyKey).at(-1), {
        ...reportsOf(filled.idempotencyKey).at(-1),
        kind: "cancelRejected",
        reason: "The order is filled",
      });
    });

    test("replace moves a resting limit (a new broker order id) and it fills at the new price; a market order's replace is rejected", async () => {
      const account = await newAccount();
      const resting = order(account, { orderType: "limit", limit: decimal("150") });
      const answer = await broker.place(resting);
      await broker.replace({ brokerId: 1, account }, resting.idempotencyKey, { limit: decimal("201"), stop: null });
      const told = reportsOf(resting.idempotencyKey);
      const original = answer.ok ? answer.brokerOrderId : "";
      assert.deepEqual(
        told.map((r) => [r.kind, r.brokerOrderId, r.price ?? r.limit]),
        [
          ["acknowledged", original, undefined],
          ["replaced", original, "201"],
          ["fill", `${original}-R1`, "200.1"],
        ],
      );
      assert.equal(told[1]?.newBrokerOrderId, `${original}-R1`);
      const market = order(account);
      await broker.place(market);
      await broker.drain();
      await broker.replace({ brokerId: 1, account }, market.idempotencyKey, { limit: decimal("1"), stop: null });
      assert.equal(reportsOf(market.idempotencyKey).at(-1)?.kind, "replaceRejected");
    });

    test("an order of an unknown account or symbol is refused at once", async () => {
      const unknown = await broker.place(order("NOBODY"));
      assert.deepEqual(unknown, { ok: false, reason: "The broker has no account NOBODY" });
      const account = await newAccount();
      const symbol = await broker.place(order(account, { symbol: "???" }));
      assert.equal(symbol.ok, false);
    });

    test("DAY orders expire at the close; a market order placed while closed fills at the open", async () => {
      const account = await newAccount();
      const day = order(account, { orderType: "limit", limit: decimal("100"), tif: "day" });
      await broker.place(day);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: "2026-03-10T21:00:01Z" } });
      assert.deepEqual(
        reportsOf(day.idempotencyKey).map((r) => r.kind),
        ["acknowledged", "expired"],
      );
      const overnight = order(account);
      await broker.place(overnight);
      await broker.drain();
      assert.deepEqual(
        reportsOf(overnight.idempotencyKey).map((r) => r.kind),
        ["acknowledged"],
      );
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: "2026-03-11T14:00:00Z" } });
      assert.deepEqual(
        reportsOf(overnight.idempotencyKey).map((r) => r.kind),
        ["acknowledged", "fill"],
      );
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
    });

    test("an expired contract's orders expire and its positions settle as the broker reports; orders in it are refused", async () => {
      const account = await newAccount();
      const call = "AAPL260320C00150000";
      const put = "AAPL260320P00150000";
      await setQuote(service, call, 5, 5.1);
      await setQuote(service, put, 2, 2.1);
      await broker.place(order(account, { symbol: call, symbolType: "option", quantity: decimal("2") }));
      await broker.place(order(account, { symbol: put, symbolType: "option", side: "sell", quantity: decimal("1") }));
      const resting = order(account, {
        symbol: call,
        symbolType: "option",
        side: "sell",
        orderType: "limit",
        limit: decimal("50"),
        quantity: decimal("2"),
      });
      await broker.place(resting);
      await broker.drain();
      assert.deepEqual([await positionOf(account, call), await positionOf(account, put)], ["2", "-1"]);
      // AAPL at 160 when its options expire: the call is worth 10, the put nothing.
      await setQuote(service, "AAPL", 159.9, 160.1);
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: "2026-03-21T04:00:00Z" } });
      await broker.drain();
      assert.deepEqual(
        reportsOf(resting.idempotencyKey).map((r) => r.kind),
        ["acknowledged", "expired"],
      );
      assert.deepEqual(reports.filter((r) => r.kind === "contractSettled" && r.account === account).map(plain), [
        { account, kind: "contractSettled", symbol: call, quantity: "2", price: "10" },
        { account, kind: "contractSettled", symbol: put, quantity: "-1", price: "0" },
      ]);
      assert.deepEqual([await positionOf(account, call), await positionOf(account, put)], [null, null]);
      // 100000 − 2 × 5.10 × 100 + 1 × 2 × 100, and the call's settlement brings 2 × 10 × 100.
      assert.equal(text((await broker.accountValue({ brokerId: 1, account })).cash), "101180");
      const late = await broker.place(order(account, { symbol: call, symbolType: "option" }));
      assert.deepEqual(late, { ok: false, reason: `${call} has expired` });
      await service.call("GEN", "POST", "/Sandbox/SetClock", { body: { Now: MARKET_OPEN } });
    });

    describe("faults", () => {
      test("reject: the next N orders are refused with the reason, then orders are taken again", async () => {
        const account = await newAccount();
        assert.deepEqual(await broker.setFault(account, { kind: "reject", count: 2, reason: "No buying power" }), [
          "reject",
        ]);
        const first = order(account);
        assert.deepEqual(await broker.place(first), { ok: false, reason: "No buying power" });
        // A retry of a refused order is the same refusal, and does not use up the fault.
        assert.deepEqual(await broker.place(first), { ok: false, reason: "No buying power" });
        assert.deepEqual(await broker.place(order(account)), { ok: false, reason: "No buying power" });
        assert.equal((await broker.place(order(account))).ok, true);
      });

      test("delay: acks and fills wait for the seconds on the service clock", async () => {
        const account = await newAccount();
        await broker.setFault(account, { kind: "delay", seconds: 30 });
        const request = order(account);
        assert.equal((await broker.place(request)).ok, true);
        await broker.drain();
        assert.deepEqual(reportsOf(request.idempotencyKey), []);
        await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 29 } });
        assert.deepEqual(reportsOf(request.idempotencyKey), []);
        await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 1 } });
        assert.deepEqual(
          reportsOf(request.idempotencyKey).map((r) => r.kind),
          ["acknowledged", "fill"],
        );
        await broker.setFault(account, { kind: "clear" });
      });

      test("partialFill: the fraction fills first and the rest rests until the next quote", async () => {
        const account = await newAccount();
        await broker.setFault(account, { kind: "partialFill", fraction: decimal("0.3") });
        const request = order(account);
        await broker.place(request);
        await broker.drain();
        assert.deepEqual(
          reportsOf(request.idempotencyKey).map((r) => [r.kind, r.quantity]),
          [
            ["acknowledged", undefined],
            ["fill", "3"],
          ],
        );
        await setQuote(service, "AAPL", 200.2, 200.3);
        assert.deepEqual(
          reportsOf(request.idempotencyKey).map((r) => [r.kind, r.quantity, r.price]),
          [
            ["acknowledged", undefined, undefined],
            ["fill", "3", "200.1"],
            ["fill", "7", "200.3"],
          ],
        );
      });

      test("disconnect: place and cancel fail until reconnect; the retry under the same key is taken once", async () => {
        const account = await newAccount();
        await broker.setFault(account, { kind: "disconnect" });
        const request = order(account);
        await assert.rejects(broker.place(request), BrokerUnavailableError);
        await assert.rejects(broker.cancel({ brokerId: 1, account }, request.idempotencyKey), BrokerUnavailableError);
        await broker.setFault(account, { kind: "reconnect" });
        const taken = await broker.place(request);
        assert.equal(taken.ok, true);
        assert.deepEqual(await broker.place(request), taken);
        await broker.drain();
        assert.equal(await positionOf(account), "10");
      });

      test("delink: open orders are canceled, the account reported delinked, orders refused until linked again", async () => {
        const account = await newAccount();
        const resting = order(account, { orderType: "limit", limit: decimal("100") });
        await broker.place(resting);
        await broker.setFault(account, { kind: "delink", reason: "Authorization revoked" });
        assert.deepEqual(
          reportsOf(resting.idempotencyKey).map((r) => [r.kind, r.reason]),
          [
            ["acknowledged", undefined],
            ["canceled", "Authorization revoked"],
          ],
        );
        assert.deepEqual(reports.filter((r) => r.account === account && r.kind === "delinked").map(plain), [
          { account, kind: "delinked", reason: "Authorization revoked" },
        ]);
        assert.deepEqual(await broker.place(order(account)), { ok: false, reason: "The account is not linked" });
        assert.deepEqual(await broker.link({ brokerId: 1, account }, "bea"), { ok: true });
        assert.equal((await broker.place(order(account))).ok, true);
        assert.deepEqual(await broker.link({ brokerId: 1, account: "NOBODY" }, null), {
          ok: false,
          reason: "The broker has no account NOBODY",
        });
      });

      for (const kind of ["marginCall", "patternDayTrader"] as const) {
        test(`${kind}: the account is reported restricted and orders are refused until cleared`, async () => {
          const account = await newAccount();
          await broker.setFault(account, { kind, reason: `${kind} reason` });
          assert.deepEqual(reports.filter((r) => r.account === account).map(plain), [
            { account, kind: "restricted", reason: `${kind} reason` },
          ]);
          assert.deepEqual(await broker.place(order(account)), {
            ok: false,
            reason: `The account is restricted: ${kind} reason`,
          });
          assert.deepEqual(await broker.setFault(account, { kind: "clear" }), []);
          assert.equal((await broker.place(order(account))).ok, true);
        });
      }

      test("externalExecution: an order the service did not send changes the position and is reported", async () => {
        const account = await newAccount();
        await broker.setFault(account, {
          kind: "externalExecution",
          symbol: "AAPL",
          side: "sell",
          quantity: decimal("5"),
          price: null,
        });
        assert.deepEqual(reports.filter((r) => r.account === account).map(plain), [
          { account, kind: "externalExecution", symbol: "AAPL", side: "sell", quantity: "5", price: "200" },
        ]);
        assert.equal(await positionOf(account), "-5");
        assert.equal(text((await broker.accountValue({ brokerId: 1, account })).cash), "101000");
      });

      test("faults are scoped to their account", async () => {
        const faulty = await newAccount();
        const fine = await newAccount();
        await broker.setFault(faulty, { kind: "reject", count: 5, reason: "No" });
        assert.equal((await broker.place(order(fine))).ok, true);
        assert.equal((await broker.place(order(faulty))).ok, false);
      });
    });

    test("a restart keeps orders, positions, cash and faults, and tells untold orders again", async () => {
      const account = await newAccount();
      const resting = order(account, { orderType: "limit", limit: decimal("190") });
      const answer = await broker.place(resting);
      const filled = order(account);
      await broker.place(filled);
      await broker.setFault(account, { kind: "reject", count: 3, reason: "Still refusing" });
      await broker.drain();
      service = await service.restart();
      await setQuote(service, "AAPL", 200, 200.1);
      listen();
      await broker.drain();
      assert.equal(await positionOf(account), "10");
      assert.equal(text((await broker.accountValue({ brokerId: 1, account })).cash), "97999");
      assert.deepEqual(await broker.place(order(account)), { ok: false, reason: "Still refusing" });
      assert.deepEqual(await broker.place(resting), answer);
      await setQuote(service, "AAPL", 189.9, 190);
      assert.deepEqual(
        reportsOf(resting.idempotencyKey).map((r) => [r.kind, r.price]),
        [["fill", "190"]],
      );
      // Orders whose reports a listener heard are not told again after the restart.
      assert.deepEqual(reportsOf(filled.idempotencyKey), []);
    });

    test("an order stored but never acknowledged (a crash between the two) is worked and told after a restart", async () => {
      const account = await newAccount();
      const now = service.app.runtime.clock.nowMs();
      await service.storage.db
        .insertInto("sim_broker_orders")
        .values({
          id: "SIM-crashed",
          idempotency_key: "crashed-key",
          broker_order_id: "SIM-crashed",
          account,
          symbol: "AAPL",
          symbol_type: "stock",
          side: "buy",
          order_type: "market",
          tif: "gtc",
          quantity: "2",
          limit_price: null,
          stop_price: null,
          as_cfd: 0,
          status: "new",
          filled_quantity: "0",
          reason: null,
          partial_fraction: null,
          held_until: null,
          expires_at: null,
          replacements: 0,
          reported: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      service = await service.restart();
      await setQuote(service, "AAPL", 200, 200.1);
      listen();
      await service.call("GEN", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: 0 } });
      await broker.drain();
      // Worked, and told to the service's first listener (the autotrade desk, which hears it from the start).
      const stored = await service.storage.db
        .selectFrom("sim_broker_orders")
        .select(["status", "filled_quantity", "reported"])
        .where("idempotency_key", "=", "crashed-key")
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored, { status: "filled", filled_quantity: "2", reported: 1 });
    });

    test("ten thousand orders placed at once are all taken (batched writes) and filled", async () => {
      const account = await newAccount("100000000");
      const requests = Array.from({ length: 10_000 }, () => order(account, { quantity: decimal("1") }));
      const started = performance.now();
      const answers = await Promise.all(requests.map((request) => broker.place(request)));
      const tookMs = performance.now() - started;
      assert.equal(answers.filter((a) => a.ok).length, 10_000);
      assert.ok(tookMs < 10_000, `placing 10,000 orders took ${Math.round(tookMs)} ms`);
      await broker.drain();
      await broker.drain();
      assert.equal(await positionOf(account), "10000");
    });
  });
}
