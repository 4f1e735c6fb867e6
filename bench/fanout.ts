/**
 * `npm run bench:fanout`: one strategy fill copied to 10,000 enabled
 * autotrade setups. A market order on the strategy fills at once; the
 * copier (an outbox consumer) makes an account order for every follower,
 * written with its outbox position in one commit, and the desk hands each to
 * the broker port once it is durable. A run ends when the broker port has been
 * handed the last of them. The broker behind the port is the simulated one
 * (its own storage, as a real broker's would be its own). Measured on
 * embedded storage and, with DATABASE_URL, on PostgreSQL (a schema of its
 * own, dropped at the end), beside the bare cost of storing 10,000 account
 * order rows in one multi-row transaction, in the same run.
 *
 * Env: FANOUT_ACCOUNTS (default 10000).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import type { Caller } from "../src/core/access.js";
import { ControllableClock } from "../src/core/clock.js";
import { decimal } from "../src/core/decimal.js";
import { asPersonId } from "../src/core/ids.js";
import { fromServiceSymbol, type Instrument } from "../src/core/symbols/instrument.js";
import { Copier } from "../src/engine/autotrade/copier.js";
import { copierMarket } from "../src/engine/autotrade/copier-market.js";
import { AutotradeDesk, type BrokerPorts } from "../src/engine/autotrade/desk.js";
import type { BrokerOrderRequest, BrokerPort } from "../src/engine/brokers/port.js";
import { SimulatedBroker } from "../src/engine/brokers/simulated.js";
import type { TradingFrame } from "../src/engine/frame/frame.js";
import { openFrame } from "../src/engine/frame/open.js";
import { MarketData } from "../src/engine/market-data.js";
import { OutboxRunner } from "../src/engine/outbox/runner.js";
import { placeOrder } from "../src/services/orders.js";
import { createPerson } from "../src/services/people.js";
import type { TradingContext } from "../src/services/trading.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { insertStrategy } from "../src/store/strategy-rows.js";
import { transaction } from "../src/store/transaction.js";
import { insertFollowingAccounts } from "./following-accounts.js";
import {
  MARKET_OPEN_MS,
  onCleanup,
  positiveIntFromEnv,
  printTable,
  progress,
  runBench,
  schemaOfOurOwn,
  tempDir,
} from "./support.js";

type BackendName = "sqlite" | "postgres";

/** The targets: every copy durably recorded and handed to the broker port within this many seconds. */
const TARGET_SECONDS: Readonly<Record<BackendName, number>> = { sqlite: 1, postgres: 2 };
const INSERT_ROWS = 500;
const SILENT = pino({ level: "silent" });

interface BackendFigures {
  readonly accounts: number;
  /** From the strategy's order to the last copy handed to the broker port. */
  readonly handedSeconds: number;
  readonly cpuSeconds: number;
  /** Until the broker answered every placement (its own orders stored). */
  readonly answeredSeconds: number;
  readonly bareSeconds: number;
  readonly copiesStored: number;
}

/** The broker port as the desk sees it, counting what it is handed. */
class CountingPort implements BrokerPort {
  readonly brokerId: number;
  handed = 0;
  #target = Number.POSITIVE_INFINITY;
  #reached: () => void = () => {};
  #answers: Promise<unknown>[] = [];

  constructor(private readonly broker: SimulatedBroker) {
    this.brokerId = broker.brokerId;
  }

  /** Resolves once `count` more placements have been handed over. */
  expect(count: number): Promise<void> {
    this.#answers = [];
    return new Promise((resolve) => {
      this.#target = this.handed + count;
      this.#reached = resolve;
    });
  }

  /** Every placement handed since `expect` answered. */
  answered(): Promise<unknown> {
    return Promise.all(this.#answers);
  }

  place(request: BrokerOrderRequest) {
    this.handed += 1;
    const answer = this.broker.place(request);
    this.#answers.push(answer);
    if (this.handed === this.#target) this.#reached();
    return answer;
  }
  link(...args: Parameters<BrokerPort["link"]>) {
    return this.broker.link(...args);
  }
  delink(...args: Parameters<BrokerPort["delink"]>) {
    return this.broker.delink(...args);
  }
  accountValue(...args: Parameters<BrokerPort["accountValue"]>) {
    return this.broker.accountValue(...args);
  }
  positions(...args: Parameters<BrokerPort["positions"]>) {
    return this.broker.positions(...args);
  }
  cancel(...args: Parameters<BrokerPort["cancel"]>) {
    return this.broker.cancel(...args);
  }
  replace(...args: Parameters<BrokerPort["replace"]>) {
    return this.broker.replace(...args);
  }
  resetPaperAccount(...args: Parameters<BrokerPort["resetPaperAccount"]>) {
    return this.broker.resetPaperAccount(...args);
  }
  onReport(...args: Parameters<BrokerPort["onReport"]>) {
    this.broker.onReport(...args);
  }
}

/** A strategy of its own person, followed by `count` brokerage accounts with enabled setups. */
async function populate(storage: Storage, clock: ControllableClock, count: number, tag: string) {
  const { personId } = await createPerson(
    { storage, clock },
    { email: `fanout-${tag}@example.com`, firstName: "Fan", lastName: "Out", role: "person" },
  );
  const strategyId = await transaction(storage, async (tx) => {
    const id = await insertStrategy(tx, {
      name: `Fan-out ${tag}`,
      owner: { id: personId, white_label_site_id: null },
      startingCapital: decimal("100000"),
      isPublic: true,
      nowMs: MARKET_OPEN_MS,
    });
    await insertFollowingAccounts(tx, {
      strategyId: id,
      siteId: null,
      accounts: Array.from({ length: count }, (_, i) => ({ personId, account: `FAN-${tag}-${i}` })),
      atMs: MARKET_OPEN_MS,
      atBroker: true,
    });
    return id;
  });
  const owner: Caller = {
    personId: asPersonId(personId),
    role: "person",
    whiteLabelSiteId: null,
    geoSiteId: null,
    platformId: null,
  };
  return { owner, strategyId };
}

/** The strategy buys 100 at market: it fills at once, and its followers' copies go out. */
async function strategyFill(ctx: TradingContext, strategyId: number, instrument: Instrument): Promise<void> {
  await placeOrder(ctx, {
    strategyId,
    instrument,
    type: "market",
    side: "buy",
    tif: "day",
    quantity: decimal("100"),
  });
}

async function backendBench(backend: BackendName, pgUrl: string | undefined, count: number): Promise<BackendFigures> {
  const schema = `bench_fanout_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  const dataDir = backend === "sqlite" ? join(await tempDir("strategy-hub-bench-fanout-"), "data") : "";
  const storage = await openStorage(
    backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
  );
  let frame: TradingFrame | undefined;
  let outbox: OutboxRunner | undefined;
  let desk: AutotradeDesk | undefined;
  let broker: SimulatedBroker | undefined;
  const close = onCleanup(`close ${backend} storage`, async () => {
    await outbox?.stop();
    await desk?.stop();
    await broker?.drain();
    await frame?.close();
    await storage.close();
  });
  try {
    await migrateToLatest(storage);
    const clock = new ControllableClock(() => MARKET_OPEN_MS, { kind: "fixed", atMs: MARKET_OPEN_MS });
    progress(`${backend}: a strategy followed by ${count} autotrade setups, and a warm-up strategy with 10`);
    const measured = await populate(storage, clock, count, "measured");
    const warmUp = await populate(storage, clock, 10, "warm-up");
    const market = new MarketData({ kind: "manual" }, clock);
    const instrument = fromServiceSymbol("AAPL") as Instrument;
    market.setQuote({
      symbol: "AAPL",
      bid: decimal("200"),
      ask: decimal("200.05"),
      last: decimal("200"),
      bidSize: null,
      askSize: null,
      atMs: MARKET_OPEN_MS,
    });
    frame = openFrame(storage);
    broker = new SimulatedBroker(storage, clock, market, SILENT);
    const port = new CountingPort(broker);
    const ports: BrokerPorts = { get: (id) => (id === port.brokerId ? port : undefined), all: () => [port] };
    desk = new AutotradeDesk(storage, clock, ports, SILENT, { passMs: 0 });
    outbox = new OutboxRunner(storage, frame, [new Copier(desk, copierMarket(frame, market, clock))], SILENT, {
      positionsMs: 1_000,
    });
    progress(`${backend}: starting the broker, the desk and the outbox`);
    await broker.start();
    await desk.start();
    await outbox.start();
    // The broker knows its accounts (a real broker's own state): it is not the service's cost to measure.
    const names = await storage.db.selectFrom("sim_broker_accounts").select("account").execute();
    await Promise.all(names.map(({ account }) => broker?.positions({ brokerId: 1, account })));
    // The strategies' model accounts are in memory, as an active strategy's is.
    await frame.preload([measured.strategyId, warmUp.strategyId]);
    const runtime = { storage, clock, market, frame };
    // The copier has read its place in the strategy's events before (as for any strategy that trades):
    // an order its followers skip (they do not trade forex) moves it without copies.
    market.setQuote({
      symbol: "EURUSD",
      bid: decimal("1.1"),
      ask: decimal("1.1001"),
      last: decimal("1.1"),
      bidSize: null,
      askSize: null,
      atMs: MARKET_OPEN_MS,
    });
    await placeOrder(
      { ...runtime, caller: measured.owner },
      {
        strategyId: measured.strategyId,
        instrument: fromServiceSymbol("EURUSD", "forex") as Instrument,
        type: "limit",
        side: "buy",
        tif: "gtc",
        quantity: decimal("10000"),
        limit: decimal("1"),
      },
    );
    await until(async () => {
      const skipped = await storage.db
        .selectFrom("copy_skips")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(skipped.n) === count;
    });
    // A first, small fill, so the measured one pays for no id reservation or journal start.
    const warmed = port.expect(10);
    await strategyFill({ ...runtime, caller: warmUp.owner }, warmUp.strategyId, instrument);
    await warmed;
    await port.answered();
    await desk.settled();
    progress(`${backend}: one strategy fill copied to ${count} setups`);
    const handed = port.expect(count);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await strategyFill({ ...runtime, caller: measured.owner }, measured.strategyId, instrument);
    await handed;
    const handedSeconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    await port.answered();
    const answeredSeconds = (performance.now() - started) / 1000;
    await desk.settled();
    progress(`${backend}: bare, ${count} account order rows in one multi-row transaction`);
    const bareStarted = performance.now();
    await transaction(storage, async (tx) => {
      for (let first = 0; first < count; first += INSERT_ROWS) {
        await tx
          .insertInto("account_orders")
          .values(
            Array.from({ length: Math.min(INSERT_ROWS, count - first) }, (_, i) => ({
              account_id: 1,
              setup_id: null,
              strategy_id: measured.strategyId,
              source_order_id: null,
              purpose: "copy" as const,
              symbol: "AAPL",
              symbol_type: "stock",
              side: "buy" as const,
              open_close: "open" as const,
              order_type: "market" as const,
              tif: "day" as const,
              quantity: "100",
              limit_price: null,
              stop_price: null,
              status: "PendingNew",
              prior_status: null,
              awaiting_confirmation: 0,
              virtual_limit: 0,
              as_cfd: 0,
              filled_quantity: "0",
              filled_notional: "0",
              idempotency_key: `bare:${first + i}`,
              broker_order_id: null,
              replaces_id: null,
              reason: null,
              created_at: MARKET_OPEN_MS,
              updated_at: MARKET_OPEN_MS,
              sent_at: null,
              closed_at: null,
            })),
          )
          .execute();
      }
      // The bare rows are not the service's: they leave with the transaction.
      throw new BareDone();
    }).catch((error: unknown) => {
      if (!(error instanceof BareDone)) throw error;
    });
    const bareSeconds = (performance.now() - bareStarted) / 1000;
    const stored = await storage.db
      .selectFrom("account_orders")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("strategy_id", "=", measured.strategyId)
      .executeTakeFirstOrThrow();
    return {
      accounts: count,
      handedSeconds: round(handedSeconds),
      cpuSeconds: round((used.user + used.system) / 1e6),
      answeredSeconds: round(answeredSeconds),
      bareSeconds: round(bareSeconds),
      copiesStored: Number(stored.n),
    };
  } finally {
    await close();
    await dropSchema?.();
  }
}

const round = (seconds: number) => Number(seconds.toFixed(3));

class BareDone extends Error {}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function main(): Promise<void> {
  const count = positiveIntFromEnv("FANOUT_ACCOUNTS", 10_000);
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const results: [BackendName, BackendFigures][] = [];
  for (const backend of backends) results.push([backend, await backendBench(backend, pgUrl, count)]);

  console.log(
    `One strategy fill (a market buy of 100 AAPL) copied to ${count} enabled autotrade setups: the copier writes ` +
      "an account order for each with its outbox position in one commit, and the desk hands each to the broker " +
      "port (the simulated broker) once durable. handed: until the port was handed the last copy; answered: until " +
      `the broker answered them all. bare: ${count} account order rows in one multi-row transaction (rolled back), ` +
      "in the same run.",
  );
  console.log("");
  printTable(
    ["", "setups", "handed s", "cpu s", "answered s", "bare s", "handed/bare", "target", "holds"],
    results.map(([backend, r]) => [
      backend,
      String(r.accounts),
      r.handedSeconds.toFixed(3),
      r.cpuSeconds.toFixed(3),
      r.answeredSeconds.toFixed(3),
      r.bareSeconds.toFixed(3),
      (r.handedSeconds / r.bareSeconds).toFixed(1),
      `≤ ${TARGET_SECONDS[backend]} s`,
      r.handedSeconds <= TARGET_SECONDS[backend] ? "yes" : "no",
    ]),
  );
  for (const [backend, r] of results) {
    if (r.copiesStored !== r.accounts)
      throw new Error(`${backend}: ${r.copiesStored} copies stored, not ${r.accounts}`);
  }
  console.log(`RESULT ${JSON.stringify({ accounts: count, results: Object.fromEntries(results) })}`);
}

await runBench(main);
