import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { settleAutotrade } from "../helpers/autotrade.js";
import { assertRefused } from "../helpers/refusals.js";
import {
  ADMIN_KEY,
  BACKENDS,
  freshStorage,
  type Population,
  populate,
  startTestService,
  statementsDuring,
  type TestService,
  type TestStorage,
} from "../helpers/service.js";
import { clockTo, followInto, strategyTrade, syncFollower } from "../helpers/sync.js";
import { newStrategy, placed, setQuote } from "../helpers/trading.js";

/**
 * GetAutotradeSyncStatusReport over HTTP: its rows and their fields, its
 * refusals, a fixed number of statements whatever the number of setups, and
 * its scaled quantities and InSync against a reference computed here over
 * random strategy positions, account holdings and settings.
 */
const kept = (storage: TestStorage): TestStorage => ({ ...storage, dispose: async () => {} });
const DURING = "2026-02-11T16:00:00Z";

/** Hand quotes whose middles are whole cents. */
const QUOTES: Readonly<Record<string, readonly [number, number]>> = {
  AAPL: [200, 200.1],
  MSFT: [400, 400.1],
  NVDA: [100, 100.2],
};
const SYMBOLS = Object.keys(QUOTES);

interface Row {
  readonly Id: number;
  readonly ReportType: number;
  readonly PersonId: number;
  readonly Account: string;
  readonly StrategyId: number;
  readonly SignalId: number | null;
  readonly StrategyName: string;
  readonly BrokerName: string;
  readonly AccountQuantity: number;
  readonly StrategyQuantity: number;
  readonly ScaledQuantity: number | null;
  readonly SignalType: number | null;
  readonly InSync: boolean;
  readonly NotInSyncReason: string | null;
  readonly ServiceSymbol: { FullSymbol: string };
  readonly ExchangeSymbol: Record<string, unknown>;
  readonly AutotradeSettings: Record<string, unknown>;
}

/** Cents of a decimal text ("1234.5" is 123450). */
const cents = (text: string): bigint => {
  const [whole = "0", fraction = ""] = text.split(".");
  const negative = whole.startsWith("-");
  const value = BigInt(whole.replace("-", "")) * 100n + BigInt(`${fraction}00`.slice(0, 2));
  return negative ? -value : value;
};
/** n / d rounded half to even (d > 0): the service's eight-place decimals round so. */
const halfEven = (n: bigint, d: bigint): bigint => {
  const q = n / d;
  const r = n % d;
  const twice = 2n * (r < 0n ? -r : r);
  if (twice < d || (twice === d && q % 2n === 0n)) return q;
  return n < 0n ? q - 1n : q + 1n;
};
const E8 = 100_000_000n;

/**
 * The reference: the strategy's position scaled by ScalingPercentage and the
 * account's value against the model account's (cash plus positions at the
 * quotes' middles), in eight-place decimals, whole shares toward zero, at
 * most MaxStocksDollars at the middle; with stocks off, only ever reduced.
 */
function reference(
  strategy: bigint,
  held: bigint,
  c: { percent: bigint; accountCents: bigint; modelCents: bigint; maxDollars: bigint | null; stocks: boolean },
  midCents: bigint,
): bigint {
  if (strategy === 0n) return 0n;
  const size = strategy < 0n ? -strategy : strategy;
  let units = halfEven(size * c.percent * c.accountCents * E8, 100n * c.modelCents) / E8;
  if (c.maxDollars !== null) {
    const room = halfEven(c.maxDollars * 100n * E8, midCents) / E8;
    if (units > room) units = room;
  }
  const way = strategy > 0n ? 1n : -1n;
  if (c.stocks) return way * units;
  if (held === 0n || held > 0n !== strategy > 0n) return 0n;
  const holding = held < 0n ? -held : held;
  return way * (holding < units ? holding : units);
}

for (const backend of BACKENDS) {
  describe(`GetAutotradeSyncStatusReport (${backend})`, () => {
    let fresh: TestStorage;
    let service: TestService;
    let p: Population;
    let made = 0;

    const report = (query: Record<string, string>, key = ADMIN_KEY, server: "WL" | "GEN" | "GEO" = "GEN") =>
      service.call(server, "GET", "/Autotrade/GetAutotradeSyncStatusReport", { key, query });
    const rowsOf = async (
      account: string,
      extra: Record<string, string> = {},
      server: "WL" | "GEN" | "GEO" = "GEN",
    ) => {
      const r = await report({ PersonId: String(p.people.personB), Account: account, ...extra }, ADMIN_KEY, server);
      assert.equal(r.status, 200, r.text);
      return r.json.Results as Row[];
    };
    const strategy = (capital = 100_000) => {
      made += 1;
      return newStrategy(service, p.keys.personA, capital, `Reported ${made}`);
    };
    const accountIdOf = async (account: string) =>
      (
        await service.storage.db
          .selectFrom("broker_accounts")
          .select("account_id")
          .where("account_number", "=", account)
          .executeTakeFirstOrThrow()
      ).account_id;

    before(async () => {
      fresh = await freshStorage(backend);
      service = await startTestService(backend, { storage: kept(fresh), marketFeed: { kind: "manual" } });
      p = await populate(service);
      await clockTo(service, DURING);
      for (const [symbol, [bid, ask]] of Object.entries(QUOTES)) await setQuote(service, symbol, bid, ask);
    });
    after(async () => {
      await service.close();
      await fresh.dispose();
    });

    test("a row per position and per working signal, symbols and settings as the other reads spell them", async () => {
      const strategyId = await strategy();
      await strategyTrade(service, p.keys.personA, strategyId, "MSFT", "buy", 10);
      const before = await placed(service, p.keys.personA, {
        StrategyId: strategyId,
        OrderType: "2",
        Side: "1",
        TIF: "1",
        OrderQuantity: 20,
        Limit: 190,
        ServiceSymbol: { FullSymbol: "AAPL" },
      });
      const account = await syncFollower(service, p.people.personB, strategyId, {}, "50000");
      const joined = await rowsOf(account);
      assert.deepEqual(
        joined.map((r) => [r.ReportType, r.ServiceSymbol.FullSymbol, r.SignalId]),
        [
          [1, "MSFT", null],
          [2, "AAPL", before.SignalId],
        ],
      );
      const [position, notCopied] = joined as [Row, Row];
      assert.deepEqual(
        [position.AccountQuantity, position.StrategyQuantity, position.ScaledQuantity, position.InSync],
        [0, 10, 5, false],
      );
      assert.match(position.NotInSyncReason ?? "", /The StocksUSA market is open: AutoSync syncs it within moments/);
      assert.deepEqual(
        [notCopied.AccountQuantity, notCopied.StrategyQuantity, notCopied.ScaledQuantity, notCopied.InSync],
        [0, 20, 10, false],
      );
      assert.match(notCopied.NotInSyncReason ?? "", /not copied/);
      // Synced at the next pass, the position is in sync; a signal working since is copied, in sync too.
      await clockTo(service, 60);
      const resting = await placed(service, p.keys.personA, {
        StrategyId: strategyId,
        OrderType: "2",
        Side: "2",
        TIF: "1",
        OrderQuantity: 10,
        Limit: 450,
        ServiceSymbol: { FullSymbol: "MSFT" },
      });
      await settleAutotrade(service);
      const rows = await rowsOf(account);
      assert.deepEqual(
        rows.map((r) => [r.ReportType, r.ServiceSymbol.FullSymbol, r.SignalId, r.InSync]),
        [
          [1, "MSFT", null, true],
          [2, "AAPL", before.SignalId, false],
          [2, "MSFT", resting.SignalId, true],
        ],
      );
      const [synced, , copied] = rows as [Row, Row, Row];
      assert.deepEqual([synced.AccountQuantity, synced.ScaledQuantity, synced.NotInSyncReason], [5, 5, null]);
      assert.deepEqual(
        [copied.AccountQuantity, copied.StrategyQuantity, copied.ScaledQuantity, copied.SignalType],
        [-5, -10, -5, 1],
      );
      assert.equal(copied.NotInSyncReason, null);
      assert.deepEqual(
        [position.PersonId, position.Account, position.StrategyId, position.BrokerName, position.SignalType],
        [p.people.personB, account, strategyId, "Simulated Broker", null],
      );
      // The symbols as GetStrategyOpenPositions spells them, the settings as GetAutotradeSettings on each server.
      const open = await service.call("GEN", "GET", "/Strategies/GetStrategyOpenPositions", {
        key: ADMIN_KEY,
        query: { StrategyIds: String(strategyId) },
      });
      assert.deepEqual(position.ServiceSymbol, open.json.Results[0].ServiceSymbol);
      assert.deepEqual(position.ExchangeSymbol, open.json.Results[0].ExchangeSymbol);
      for (const server of ["WL", "GEN", "GEO"] as const) {
        const settings = await service.call(server, "GET", "/Autotrade/GetAutotradeSettings", {
          key: ADMIN_KEY,
          query: { PersonId: String(p.people.personB), Account: account },
        });
        const [row] = await rowsOf(account, {}, server);
        assert.deepEqual(row?.AutotradeSettings, settings.json.Results[0], server);
        assert.equal("BrokerAuthorizationStatus" in (row?.AutotradeSettings ?? {}), server !== "WL");
      }
    });

    test("refusals name the field at fault; an account with no live setup answers no rows", async () => {
      const strategyId = await strategy();
      const account = await syncFollower(service, p.people.personB, strategyId);
      assertRefused(await report({ Account: account }), 400, "PersonId", "1102");
      assertRefused(await report({ PersonId: String(p.people.personB) }), 400, "Account", "1102");
      assertRefused(await report({ PersonId: "x", Account: account }), 400, "PersonId", "1101");
      assertRefused(
        await report({ PersonId: String(p.people.personB), Account: account, StrategyId: "0" }),
        400,
        "StrategyId",
      );
      assertRefused(await report({ PersonId: "999999", Account: account }), 404, "PersonId", "2013");
      assertRefused(
        await report({ PersonId: String(p.people.personB), Account: account }, p.keys.personA),
        403,
        "PersonId",
      );
      assertRefused(await report({ PersonId: String(p.people.personA), Account: account }), 404, "Account", "2013");
      // The person may read their own; WL and GEO answer too.
      assert.equal(
        (await report({ PersonId: String(p.people.personB), Account: account }, p.keys.personB)).status,
        200,
      );
      assert.equal(
        (await report({ PersonId: String(p.people.personB), Account: account }, ADMIN_KEY, "WL")).status,
        200,
      );
      assert.equal(
        (await report({ PersonId: String(p.people.personB), Account: account }, ADMIN_KEY, "GEO")).status,
        200,
      );
      // StrategyId narrows; a strategy the account does not follow has no rows.
      const other = await strategy();
      assert.deepEqual(await rowsOf(account, { StrategyId: String(other) }), []);
      const stop = await service.call("GEN", "DELETE", "/Autotrade/StopAutotrade", {
        key: ADMIN_KEY,
        query: { Account: account, PersonId: String(p.people.personB), StrategyId: String(strategyId), BrokerId: "1" },
      });
      assert.equal(stop.status, 200, stop.text);
      await clockTo(service, 1);
      assert.deepEqual(await rowsOf(account), []);
    });

    test("the report reads a fixed number of statements, however many setups the account has", async () => {
      const first = await strategy();
      await strategyTrade(service, p.keys.personA, first, "AAPL", "buy", 10);
      const account = await syncFollower(service, p.people.personB, first);
      const count = () =>
        statementsDuring(service, async () => {
          await rowsOf(account);
        });
      const few = await count();
      for (let i = 0; i < 12; i++) {
        const strategyId = await strategy();
        await strategyTrade(service, p.keys.personA, strategyId, SYMBOLS[i % 3] as string, "buy", 10);
        await followInto(service, p.people.personB, account, strategyId);
      }
      assert.equal((await rowsOf(account)).length, 13);
      assert.equal(await count(), few);
      assert.ok(few <= 12, `${few} statements`);
    });

    test("scaled quantities and InSync agree with the reference over random positions, holdings and settings", async () => {
      const position = fc.integer({ min: -60, max: 60 });
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            strategy: fc.tuple(position, position, position),
            held: fc.tuple(position, position, position),
            percent: fc.integer({ min: 20, max: 300 }),
            cash: fc.integer({ min: 20_000, max: 400_000 }),
            maxDollars: fc.option(fc.integer({ min: 0, max: 12_000 }), { nil: null }),
            stocks: fc.boolean(),
          }),
          async (c) => {
            const strategyId = await strategy(500_000);
            for (const [i, quantity] of c.strategy.entries()) {
              if (quantity === 0) continue;
              await strategyTrade(
                service,
                p.keys.personA,
                strategyId,
                SYMBOLS[i] as string,
                quantity > 0 ? "buy" : "sell",
                Math.abs(quantity),
              );
            }
            const account = await syncFollower(
              service,
              p.people.personB,
              strategyId,
              {
                ScalingPercentage: c.percent,
                EnableStocks: c.stocks,
                ...(c.maxDollars === null ? {} : { MaxStocksDollars: c.maxDollars }),
              },
              String(c.cash),
            );
            // The account's holdings, as the desk would have written them.
            const accountId = await accountIdOf(account);
            for (const [i, quantity] of c.held.entries()) {
              if (quantity === 0) continue;
              await service.storage.db
                .insertInto("autotrade_positions")
                .values({
                  account_id: accountId,
                  strategy_id: strategyId,
                  symbol: SYMBOLS[i] as string,
                  symbol_type: "stock",
                  quantity: String(quantity),
                  cost: String(quantity * 200),
                  opened_at: 0,
                })
                .execute();
            }
            const db = service.storage.db;
            const model = await db
              .selectFrom("accounts")
              .select("cash")
              .where("strategy_id", "=", strategyId)
              .executeTakeFirstOrThrow();
            const broker = await db
              .selectFrom("broker_accounts")
              .select("net_liquidation")
              .where("account_id", "=", accountId)
              .executeTakeFirstOrThrow();
            const mid = (symbol: string) => {
              const [bid, ask] = QUOTES[symbol] as readonly [number, number];
              return BigInt(Math.round(((bid + ask) / 2) * 100));
            };
            const modelCents = c.strategy.reduce(
              (sum, quantity, i) => sum + BigInt(quantity) * mid(SYMBOLS[i] as string),
              cents(model.cash),
            );
            const rows = (await rowsOf(account)).filter((r) => r.ReportType === 1);
            const expected = SYMBOLS.flatMap((symbol, i) =>
              c.strategy[i] === 0 && c.held[i] === 0
                ? []
                : [
                    {
                      symbol,
                      target: reference(
                        BigInt(c.strategy[i] as number),
                        BigInt(c.held[i] as number),
                        {
                          percent: BigInt(c.percent),
                          accountCents: cents(broker.net_liquidation ?? "0"),
                          modelCents,
                          maxDollars: c.maxDollars === null ? null : BigInt(c.maxDollars),
                          stocks: c.stocks,
                        },
                        mid(symbol),
                      ),
                      held: BigInt(c.held[i] as number),
                    },
                  ],
            );
            assert.deepEqual(
              rows.map((r) => [
                r.ServiceSymbol.FullSymbol,
                r.StrategyQuantity,
                r.AccountQuantity,
                r.ScaledQuantity,
                r.InSync,
              ]),
              expected.map((e) => [
                e.symbol,
                c.strategy[SYMBOLS.indexOf(e.symbol)],
                Number(e.held),
                Number(e.target),
                e.held === e.target,
              ]),
            );
            for (const r of rows) assert.equal(r.NotInSyncReason === null, r.InSync);
          },
        ),
        { numRuns: 15 },
      );
    });
  });
}
