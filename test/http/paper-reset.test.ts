import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decimal } from "../../src/core/decimal.js";
import { insertBrokerAccount } from "../../src/services/broker-accounts.js";
import { settleAutotrade } from "../helpers/autotrade.js";
import {
  accountQuery,
  accountsService,
  activeOf,
  brokerFault,
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
import { ADMIN_KEY, BACKENDS, type Population, setClock, type TestService } from "../helpers/service.js";
import { MARKET_OPEN } from "../helpers/trading.js";

/**
 * ResetPaperTrade over HTTP: a paper account back to its starting cash at
 * the simulated broker and at the service (orders canceled, positions
 * cleared, returns started over); live accounts and a broker that did not
 * reset refused, changing nothing.
 */
for (const backend of BACKENDS) {
  describe(`ResetPaperTrade (${backend})`, () => {
    let service: TestService;
    let p: Population;

    const reset = async (account: string, key = p.keys.personB, server: "WL" | "GEN" | "GEO" = "GEN") => {
      const r = await service.call(server, "PUT", "/Autotrade/ResetPaperTrade", {
        key,
        body: { Account: account, PersonId: p.people.personB },
      });
      await settleAutotrade(service);
      return r;
    };
    /** A paper account of 30,000 dollars holding 30 AAPL (its copy of the strategy's 100) and a resting manual exit. */
    const trading = async (): Promise<Following> => {
      const following = await followingAccount(service, p, { cash: "30000", paper: true });
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      const exit = await sendManual(service, p.keys.personB, manualOrder(p, following, { OrderQuantity: 5 }));
      assert.equal(exit.status, 200, exit.text);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
      return following;
    };
    const brokerCash = async (account: string) =>
      (
        await service.storage.db
          .selectFrom("sim_broker_accounts")
          .select("cash")
          .where("account", "=", account)
          .executeTakeFirstOrThrow()
      ).cash;

    before(async () => {
      ({ service, p } = await accountsService(backend));
    });
    after(() => service.close());

    test("a paper account goes back to its starting cash: orders canceled, positions cleared, here and at the broker", async () => {
      const following = await trading();
      assert.notEqual(await brokerCash(following.account), "30000");
      const r = await reset(following.account);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.Results, [true]);
      assert.deepEqual(await positionsOf(service, p, following.account), []);
      assert.deepEqual(await activeOf(service, p, following.account), []);
      const [exit] = await historyOf(service, p, following.account, { OrderStatus: "4" });
      assert.equal(exit?.Info, "The paper account was reset");
      assert.equal(await heldAtBroker(service, following.account), 0);
      assert.equal(await brokerCash(following.account), "30000");
      const row = await service.storage.db
        .selectFrom("broker_accounts")
        .select(["reset_at", "net_liquidation"])
        .where("account_number", "=", following.account)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.reset_at), service.app.runtime.clock.nowMs());
      assert.equal(row.net_liquidation, "30000");
      // The setup goes on following the strategy: its next order is copied afresh.
      await strategyTrades(service, p, following.strategyId, "buy", 100);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
      assert.deepEqual(await storedOrders(service, following.account), [
        "copy buy 30 market Filled",
        "manual sell 5 limit Canceled",
        "copy buy 30 market Filled",
      ]);
      // A reset twice is no harm; administrators of the owner may ask for it on every server.
      assert.equal((await reset(following.account, p.keys.wlAdminB, "WL")).status, 200);
      assert.equal((await reset(following.account, ADMIN_KEY, "GEO")).status, 200);
      assert.deepEqual(await positionsOf(service, p, following.account), []);
    });

    test("a reset starts the account's returns over: its marks go, and the next close is measured from the starting cash", async () => {
      const following = await trading();
      await setClock(service, "2026-03-10T20:30:00Z");
      await settleAutotrade(service);
      const marked = () =>
        service.storage.db
          .selectFrom("account_marks as m")
          .innerJoin("broker_accounts as b", "b.account_id", "m.account_id")
          .select("m.value")
          .where("b.account_number", "=", following.account)
          .execute();
      assert.equal((await marked()).length, 1);
      assert.equal((await reset(following.account)).status, 200);
      assert.deepEqual(await marked(), []);
      const board = await accountQuery(service, p.keys.personB, "GET", "GetDashBoard", {
        PersonId: p.people.personB,
        Account: following.account,
      });
      assert.deepEqual(
        board.json.Results.map((x: { TodayReturn: number | null; TotalReturn: number | null }) => [
          x.TodayReturn,
          x.TotalReturn,
        ]),
        [[null, null]],
      );
      // The next close: nothing held, nothing gained since the reset; the account is worth its starting cash.
      await setClock(service, "2026-03-11T20:30:00Z");
      await settleAutotrade(service);
      assert.deepEqual(
        (await marked()).map((m) => m.value),
        ["30000"],
      );
      const after = await accountQuery(service, p.keys.personB, "GET", "GetDashBoard", {
        PersonId: p.people.personB,
        Account: following.account,
      });
      assert.deepEqual(
        after.json.Results.map((x: { TodayReturn: number | null; TotalReturn: number | null }) => [
          x.TodayReturn,
          x.TotalReturn,
        ]),
        [[0, 0]],
      );
      await setClock(service, MARKET_OPEN);
    });

    test("refused, changing nothing: a live account, a broker not reached, another's account", async () => {
      const following = await trading();
      const live = await followingAccount(service, p, { cash: "30000" });
      const refusedLive = await reset(live.account);
      assertRefused(refusedLive, 409, "Account", "1202");
      assert.match(refusedLive.json.ResponseStatus.Errors[0].Message, /live account/);
      await brokerFault(service, following.account, { Fault: "disconnect" });
      const unreached = await reset(following.account);
      assertRefused(unreached, 409, "Account", "1202");
      assert.match(unreached.json.ResponseStatus.Errors[0].Message, /nothing was reset/);
      assert.deepEqual(
        (await positionsOf(service, p, following.account)).map((x) => x.Quantity),
        [30],
      );
      assert.equal((await activeOf(service, p, following.account)).length, 1);
      assert.equal(await heldAtBroker(service, following.account), 30);
      await brokerFault(service, following.account, { Fault: "reconnect" });
      assertRefused(await reset(following.account, p.keys.personA), 403, "PersonId", "1002");
      assertRefused(await reset("NO-SUCH-ACCOUNT"), 404, "Account", "2013");
      const missing = await service.call("GEN", "PUT", "/Autotrade/ResetPaperTrade", {
        key: p.keys.personB,
        body: { PersonId: p.people.personB },
      });
      assertRefused(missing, 400, "Account", "1102");
      // A paper account the broker does not know (recorded here only): the broker's refusal, nothing reset.
      await insertBrokerAccount(
        service.storage.db,
        { personId: p.people.personB, brokerId: 1, account: `UNKNOWN-${backend}`, cash: decimal("1000"), paper: true },
        service.app.runtime.clock.nowMs(),
      );
      assertRefused(await reset(`UNKNOWN-${backend}`), 409, "Account", "1202");
    });
  });
}
