import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { decimal } from "../../src/core/decimal.js";
import { ORDERS_CHANNEL } from "../../src/store/channels.js";
import type { Backend } from "../../src/store/storage.js";
import {
  ADMIN_KEY,
  BACKENDS,
  populate,
  setClock,
  startTestService,
  type TestService,
  until,
} from "../helpers/service.js";
import {
  activeOrders,
  MARKET_OPEN,
  newOrder,
  newStrategy,
  placed,
  positions,
  setQuote,
  signal,
  stockOrder,
} from "../helpers/trading.js";

/** Cash of the strategy and the sum of its fills' cash, straight from storage. */
async function ledger(service: TestService, strategyId: number) {
  const strategy = await service.storage.db
    .selectFrom("accounts")
    .select(["cash", "starting_cash as starting_capital"])
    .where("strategy_id", "=", strategyId)
    .executeTakeFirstOrThrow();
  const fills = await service.storage.db
    .selectFrom("fills")
    .select(["cash", "quantity"])
    .where("strategy_id", "=", strategyId)
    .execute();
  const cents = (text: string) => Math.round(Number(text) * 100);
  return {
    cash: cents(strategy.cash),
    expected: cents(strategy.starting_capital) + fills.reduce((sum, f) => sum + cents(f.cash), 0),
    fills: fills.length,
  };
}

/** Two processes of the service on one database at the market's open, and a strategy of person A. */
async function twoProcesses(backend: Backend) {
  const first = await startTestService(backend, { marketFeed: { kind: "manual" } });
  const second = await first.sibling().catch(async (error: unknown) => {
    await first.close();
    throw error;
  });
  try {
    const key = (await populate(first)).keys.personA;
    await setClock(first, MARKET_OPEN);
    await setClock(second, MARKET_OPEN);
    return { first, second, key, strategyId: await newStrategy(first, key) };
  } catch (error) {
    await second.close();
    await first.close();
    throw error;
  }
}

for (const backend of BACKENDS) {
  describe(`concurrent trading on one strategy (${backend})`, () => {
    test("concurrent orders on one strategy all land: every fill counted once in the position and the cash", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "AAPL", 200, 200.05);
        const answers = await Promise.all(
          Array.from({ length: 30 }, () => newOrder(service, key, stockOrder(strategyId, "AAPL", "buy", 1))),
        );
        assert.deepEqual(
          answers.map((r) => r.status),
          answers.map(() => 200),
        );
        assert.equal(new Set(answers.map((r) => r.json.Results[0].SignalId)).size, 30);
        assert.equal((await positions(service, key, strategyId))[0]?.Quantity, 30);
        const money = await ledger(service, strategyId);
        assert.equal(money.fills, 30);
        assert.equal(money.cash, money.expected);
      } finally {
        await service.close();
      }
    });

    test("two instances of the service on one database: orders through both never corrupt the strategy", async () => {
      const first = await startTestService(backend, { marketFeed: { kind: "manual" } });
      const second = await first.sibling();
      try {
        const population = await populate(first);
        const key = population.keys.personA;
        await setClock(first, MARKET_OPEN);
        await setClock(second, MARKET_OPEN);
        const strategyId = await newStrategy(first, key);
        for (const service of [first, second]) await setQuote(service, "MSFT", 400, 400.1);
        const answers = await Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            newOrder(i % 2 === 0 ? first : second, key, stockOrder(strategyId, "MSFT", "buy", 2)),
          ),
        );
        assert.deepEqual(
          answers.map((r) => r.status),
          answers.map(() => 200),
        );
        assert.equal((await positions(first, key, strategyId))[0]?.Quantity, 48);
        const money = await ledger(first, strategyId);
        assert.equal(money.fills, 24);
        assert.equal(money.cash, money.expected);
      } finally {
        await second.close();
        await first.close();
      }
    });

    test("a cancel racing a fill ends one way only", async () => {
      const service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      try {
        const population = await populate(service);
        const key = population.keys.personA;
        await setClock(service, MARKET_OPEN);
        const strategyId = await newStrategy(service, key);
        await setQuote(service, "KO", 60, 60.02);
        const orders = await Promise.all(
          Array.from({ length: 10 }, () =>
            placed(service, key, stockOrder(strategyId, "KO", "buy", 1, { OrderType: "2", Limit: 59 })),
          ),
        );
        const cancels = orders.map((o) =>
          service.call("GEN", "DELETE", "/Strategies/CancelStrategyOrder", {
            key,
            query: { StrategyId: String(strategyId), SignalId: String(o.SignalId) },
          }),
        );
        await Promise.all([...cancels, setQuote(service, "KO", 58.9, 58.95)]);
        let filled = 0;
        for (const order of orders) {
          const status = (await signal(service, key, order.SignalId)).OrderStatus;
          assert.ok(status === "2" || status === "4", status);
          if (status === "2") filled += 1;
        }
        assert.equal((await positions(service, key, strategyId))[0]?.Quantity ?? 0, filled);
      } finally {
        await service.close();
      }
    });

    if (backend === "postgres") {
      test("an order placed through one process is filled by another's fill loop (LISTEN/NOTIFY)", async () => {
        const { first, second, key, strategyId } = await twoProcesses(backend);
        try {
          const order = await placed(
            first,
            key,
            stockOrder(strategyId, "IBM", "buy", 3, { OrderType: "2", Limit: 250 }),
          );
          for (let i = 0; i < 100 && second.app.fillLoop.index.workingOrders === 0; i++) await sleep(20);
          assert.equal(second.app.fillLoop.index.workingOrders, 1, "the second process heard of the order");
          const quote = await second.call("GEN", "POST", "/Sandbox/SetQuote", {
            key: ADMIN_KEY,
            body: { Symbol: "IBM", Bid: 249, Ask: 249.5, Last: 249 },
          });
          assert.equal(quote.status, 200);
          assert.equal((await signal(first, key, order.SignalId)).OrderStatus, "2");
        } finally {
          await second.close();
          await first.close();
        }
      });

      test("a process reads again the accounts another process committed, never those its own NOTIFY tells of", async () => {
        const { first, second, key, strategyId } = await twoProcesses(backend);
        try {
          const limitBuy = () => stockOrder(strategyId, "IBM", "buy", 1, { OrderType: "2", Limit: 250 });
          const frame = first.app.runtime.frame;
          const preload = frame.preload.bind(frame);
          const readAgain: number[] = [];
          frame.preload = (strategyIds) => {
            readAgain.push(...(strategyIds ?? []));
            return preload(strategyIds);
          };
          for (let i = 0; i < 10; i++) await placed(first, key, limitBuy());
          // Each commit's notification comes back to the process's own listener meanwhile.
          await sleep(300);
          assert.deepEqual(readAgain, [], "its own commits are not read again");

          const version = frame.versionOf(strategyId);
          await placed(second, key, limitBuy());
          await until(() => frame.versionOf(strategyId) > version);
          assert.deepEqual(readAgain, [strategyId], "the other process's commit is read again");
          assert.equal((await activeOrders(first, key, strategyId)).length, 11);
        } finally {
          await second.close();
          await first.close();
        }
      });

      test("orders placed while a process's listening connection was down reach its fill loop when it is back", async () => {
        const { first, second, key, strategyId } = await twoProcesses(backend);
        try {
          const schema = first.env.PGOPTIONS?.split("=")[1] ?? "";
          const listeners = sql<{ pid: number }>`
            select pid from pg_stat_activity
            where application_name = ${`strategy-hub listener ${schema}`} and query = ${`listen ${ORDERS_CHANNEL}`}`;
          const before = (await listeners.execute(first.storage.db)).rows.map((row) => row.pid);
          assert.equal(before.length, 2, "both processes listen");
          await sql`select pg_terminate_backend(pid) from unnest(${before}::int[]) as pid`.execute(first.storage.db);
          for (let i = 0; i < 100; i++) {
            const left = (await listeners.execute(first.storage.db)).rows.filter((row) => before.includes(row.pid));
            if (left.length === 0) break;
            await sleep(2);
          }
          // Told while nobody listened: the second process learns of it when it listens again.
          const order = await placed(
            first,
            key,
            stockOrder(strategyId, "IBM", "buy", 3, { OrderType: "2", Limit: 250 }),
          );
          for (let i = 0; i < 250 && second.app.fillLoop.index.workingOrders === 0; i++) await sleep(20);
          assert.equal(second.app.fillLoop.index.workingOrders, 1, "the second process read the order");
          second.app.market.setQuote({
            symbol: "IBM",
            bid: decimal("249"),
            ask: decimal("249.5"),
            last: decimal("249"),
            bidSize: null,
            askSize: null,
            atMs: second.app.runtime.clock.nowMs(),
          });
          await second.app.fillLoop.catchUp();
          assert.equal((await signal(first, key, order.SignalId)).OrderStatus, "2");
        } finally {
          await second.close();
          await first.close();
        }
      });
    }
  });
}
