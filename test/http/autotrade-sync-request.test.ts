import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { settleAutotrade, stopAutotrade } from "../helpers/autotrade.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  freshStorage,
  type Population,
  populate,
  startTestService,
  type TestService,
  type TestStorage,
} from "../helpers/service.js";
import { clockTo, followInto, heldIn, lastSyncOf, strategyTrade, syncFollower, syncOrdersOf } from "../helpers/sync.js";
import { newStrategy, setQuote } from "../helpers/trading.js";

/**
 * SyncPositionsToOpen (GEN) over HTTP: the account is synced now in the
 * markets open now and at the next open of the markets closed now; each
 * strategy answers with a ReasonCode; the request's refusals name the field
 * at fault and write nothing.
 */
const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });

/** A Wednesday: during the US session, after its close, and the next day's open (EST). */
const DURING = "2026-02-11T16:00:00Z";
const AFTER_CLOSE = "2026-02-11T21:30:00Z";
const NEXT_OPEN = "2026-02-12T14:30:00Z";

interface SyncAnswer {
  readonly StrategyId: number;
  readonly Success: boolean;
  readonly Reason: string;
  readonly ReasonCode: number;
}

for (const backend of BACKENDS) {
  describe(`SyncPositionsToOpen (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;
    let made = 0;

    const sync = (body: Record<string, unknown>, key = ADMIN_KEY, server: "GEN" | "WL" | "GEO" = "GEN") =>
      service.call(server, "POST", "/Autotrade/SyncPositionsToOpen", { key, body });
    const bodyOf = (account: string, strategyIds: unknown) => ({
      Account: account,
      PersonId: p.people.personB,
      BrokerId: 1,
      StrategyIds: strategyIds,
    });
    const answers = async (account: string, strategyIds: number[]): Promise<SyncAnswer[]> => {
      const r = await sync(bodyOf(account, strategyIds));
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
      return r.json.Results;
    };
    const strategy = async (holding = true) => {
      made += 1;
      const id = await newStrategy(service, p.keys.personA, 100_000, `Requested ${made}`);
      if (holding) await strategyTrade(service, p.keys.personA, id, "AAPL", "buy", 100);
      return id;
    };
    const follower = (strategyId: number) => syncFollower(service, p.people.personB, strategyId, {}, "50000");
    const stopOf = (account: string, strategyId: number) => ({
      Account: account,
      PersonId: p.people.personB,
      StrategyId: strategyId,
      BrokerId: 1,
    });
    const writes = async () => {
      const db = service.storage.db;
      const count = async (table: "account_orders" | "autotrade_syncs") =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return [await count("account_orders"), await count("autotrade_syncs")];
    };

    before(async () => {
      fresh = await freshStorage(backend);
      service = await startTestService(backend, { storage: kept(fresh), marketFeed: { kind: "manual" } });
      p = await populate(service);
      await clockTo(service, DURING);
      await setQuote(service, "AAPL", 200, 200.1);
    });
    after(async () => {
      await service.close();
      await fresh.dispose();
    });

    test("refusals name the field at fault and write nothing", async () => {
      const strategyId = await strategy();
      const account = await follower(strategyId);
      const before = await writes();
      assertRefused(
        await sync({ ...bodyOf(account, [strategyId]), StrategyIds: undefined }),
        400,
        "StrategyIds",
        "1102",
      );
      assertRefused(await sync(bodyOf(account, [])), 400, "StrategyIds", "1101");
      assertRefused(
        await sync(
          bodyOf(
            account,
            Array.from({ length: 101 }, (_, i) => i + 1),
          ),
        ),
        400,
        "StrategyIds",
      );
      assertRefused(await sync(bodyOf(account, [strategyId, strategyId])), 400, "StrategyIds[1]", "1101");
      assertRefused(await sync(bodyOf(account, ["one"])), 400, "StrategyIds[0]", "1101");
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), BrokerId: undefined }), 400, "BrokerId", "1102");
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), BrokerId: 2_147_483_648 }), 400, "BrokerId");
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), Account: "" }), 400, "Account");
      const malformed = await service.call("GEN", "POST", "/Autotrade/SyncPositionsToOpen", { rawBody: "{" });
      assertRefused(malformed, 400, undefined, "1103");
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), PersonId: 999_999 }), 404, "PersonId", "2013");
      assertRefused(await sync(bodyOf(account, [strategyId]), p.keys.personA), 403, "PersonId", "1002");
      assertRefused(await sync(bodyOf("NO-SUCH-ACCOUNT", [strategyId])), 404, "Account", "2013");
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), BrokerId: 77 }), 404, "BrokerId", "2013");
      // Another person's account is not the person's.
      assertRefused(await sync({ ...bodyOf(account, [strategyId]), PersonId: p.people.personA }), 404, "Account");
      // GEN only.
      assert.equal((await sync(bodyOf(account, [strategyId]), ADMIN_KEY, "WL")).status, 404);
      assert.equal((await sync(bodyOf(account, [strategyId]), ADMIN_KEY, "GEO")).status, 404);
      assert.deepEqual(await writes(), before);
      assert.equal(await heldIn(service, account, "AAPL"), "0");
    });

    test("the person syncs now in an open market; a repeat makes no second order", async () => {
      const strategyId = await strategy();
      const account = await follower(strategyId);
      const key = p.keys.personB;
      const r = await sync(bodyOf(account, [strategyId]), key);
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
      assert.deepEqual(r.json.Results, [
        { StrategyId: strategyId, Success: true, Reason: "Synced now: StocksUSA (1 order)", ReasonCode: 0 },
      ]);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      const [again] = await answers(account, [strategyId]);
      assert.equal(again?.Reason, "Synced now: StocksUSA (0 orders)");
      assert.equal((await syncOrdersOf(service, account)).length, 1);
      const lastSync = await lastSyncOf(service, p.people.personB, account);
      assert.equal(lastSync.StocksUSA, new Date(DURING).toISOString());
    });

    test("each strategy says why it was not synced, in the order asked", async () => {
      const stopped = await strategy();
      const account = await follower(stopped);
      const [disabled, noSync, flat, unfollowed] = [
        await strategy(),
        await strategy(),
        await strategy(false),
        await strategy(),
      ];
      for (const strategyId of [disabled, noSync, flat])
        await followInto(service, p.people.personB, account, strategyId);
      assert.equal((await stopAutotrade(service, ADMIN_KEY, stopOf(account, stopped))).status, 200);
      // One setup's autotrade and another's AutoSync off (SetAutotradeSettings sets every setup of an account).
      const db = service.storage.db;
      const setupOf = async (strategyId: number) =>
        (
          await db
            .selectFrom("autotrade_setups")
            .select("id")
            .where("strategy_id", "=", strategyId)
            .where("status", "!=", "stopped")
            .executeTakeFirstOrThrow()
        ).id;
      const offIds = [await setupOf(disabled), await setupOf(noSync)];
      await db
        .updateTable("autotrade_setups")
        .set({ is_autotrade_enabled: 0, autotrade_disabled_reason: "Disabled for the test" })
        .where("id", "=", offIds[0] as number)
        .execute();
      await db
        .updateTable("autotrade_setups")
        .set({ is_sync_enabled: 0, sync_disabled_reason: "Disabled with SetAutotradeSettings" })
        .where("id", "=", offIds[1] as number)
        .execute();
      service.app.desk.setupsChanged(offIds);
      await settleAutotrade(service);
      const results = await answers(account, [stopped, disabled, noSync, unfollowed, 999_999, flat]);
      assert.deepEqual(
        results.map((r) => [r.StrategyId, r.Success, r.ReasonCode]),
        [
          [stopped, false, 11],
          [disabled, false, 12],
          [noSync, false, 14],
          [unfollowed, false, 10],
          [999_999, false, 10],
          [flat, true, 0],
        ],
      );
      assert.match(results[1]?.Reason ?? "", /Autotrade is disabled: Disabled for the test/);
      assert.match(results[2]?.Reason ?? "", /AutoSync is disabled: Disabled with SetAutotradeSettings/);
      assert.equal(results[5]?.Reason, "Neither the strategy nor the account holds a position: nothing to sync");
      assert.deepEqual(await syncOrdersOf(service, account), []);
    });

    test("an account its broker delinked is said so", async () => {
      const strategyId = await strategy();
      const account = await follower(strategyId);
      const r = await service.call("GEN", "POST", "/Sandbox/SetBrokerFault", {
        key: ADMIN_KEY,
        body: { Account: account, Fault: "delink", Reason: "Authorization revoked" },
      });
      assert.equal(r.status, 200, r.text);
      await settleAutotrade(service);
      const [result] = await answers(account, [strategyId]);
      assert.deepEqual([result?.Success, result?.ReasonCode], [false, 13]);
    });

    test("symbols the sync may not join are left and said so; the others are synced", async () => {
      await setQuote(service, "MSFT", 400, 400.1);
      const strategyId = await strategy(false);
      await strategyTrade(service, p.keys.personA, strategyId, "AAPL", "buy", 100, { DoNotSyncToOpen: true });
      await strategyTrade(service, p.keys.personA, strategyId, "MSFT", "buy", 10);
      const account = await follower(strategyId);
      const [result] = await answers(account, [strategyId]);
      assert.deepEqual([result?.Success, result?.ReasonCode], [true, 2]);
      assert.match(
        result?.Reason ?? "",
        /^Synced now: StocksUSA \(1 order\); left as they are: AAPL \(.*DoNotSyncToOpen/,
      );
      assert.equal(await heldIn(service, account, "MSFT"), "5");
      assert.equal(await heldIn(service, account, "AAPL"), "0");
    });

    test("a market closed now is synced at its next open, WillSyncToOpen or not", async () => {
      const strategyId = await strategy();
      await clockTo(service, AFTER_CLOSE);
      const account = await follower(strategyId);
      // The market's flag off (as stored): the request is what syncs it.
      const db = service.storage.db;
      const setup = await db
        .selectFrom("autotrade_setups")
        .select(["id", "sync_to_open"])
        .where("strategy_id", "=", strategyId)
        .executeTakeFirstOrThrow();
      await db
        .updateTable("autotrade_setups")
        .set({ sync_to_open: JSON.stringify({ ...JSON.parse(setup.sync_to_open), StocksUSA: false }) })
        .where("id", "=", setup.id)
        .execute();
      const [result] = await answers(account, [strategyId]);
      assert.deepEqual(result, {
        StrategyId: strategyId,
        Success: true,
        Reason: `At the next open: StocksUSA (${new Date(NEXT_OPEN).toISOString()})`,
        ReasonCode: 1,
      });
      assert.deepEqual(await syncOrdersOf(service, account), []);
      await clockTo(service, new Date(Date.parse(NEXT_OPEN) - 60_000).toISOString());
      assert.equal(await heldIn(service, account, "AAPL"), "0");
      await clockTo(service, 60);
      assert.equal(await heldIn(service, account, "AAPL"), "50");
      assert.equal((await lastSyncOf(service, p.people.personB, account)).StocksUSA, new Date(NEXT_OPEN).toISOString());
      // The request is settled by that open: the next one is not synced for it (the flag is off).
      const row = await db
        .selectFrom("autotrade_syncs")
        .select(["requested_for", "opens_at"])
        .where("setup_id", "=", setup.id)
        .where("venue", "=", "StocksUSA")
        .executeTakeFirstOrThrow();
      assert.deepEqual([row.requested_for, Number(row.opens_at)], [null, Date.parse(NEXT_OPEN)]);
    });
  });
}
