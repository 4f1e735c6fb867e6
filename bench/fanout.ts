/**
 * `npm run bench:fanout`: one event places one order in each of 10,000
 * distinct accounts through the trading frame, all durably committed, as the
 * autotrade copier will for a strategy's followers (until autotrade accounts
 * exist, the model accounts of 10,000 strategies stand for them). Measured on
 * embedded storage and, with DATABASE_URL, on PostgreSQL (a schema of its
 * own, dropped at the end):
 *
 * - warm: the accounts are in the frame's memory (as followers of an active
 *   strategy are), each gets a resting limit order;
 * - cold: the accounts are not in memory yet and are read first;
 *
 * beside, in the same run, the bare cost of storing 10,000 order rows: one
 * multi-row insert in one transaction, no rules, no events.
 *
 * Env: FANOUT_ACCOUNTS (default 10000).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Caller } from "../src/core/access.js";
import { ControllableClock } from "../src/core/clock.js";
import { decimal } from "../src/core/decimal.js";
import { asPersonId } from "../src/core/ids.js";
import { fromServiceSymbol, type Instrument } from "../src/core/symbols/instrument.js";
import type { TradingFrame } from "../src/engine/frame/frame.js";
import { openFrame } from "../src/engine/frame/open.js";
import { MarketData } from "../src/engine/market-data.js";
import { type OrderInput, placeOrder } from "../src/services/orders.js";
import { createPerson } from "../src/services/people.js";
import type { TradingContext } from "../src/services/trading.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { transaction } from "../src/store/transaction.js";
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

/** The targets: all 10,000 orders durably committed within this many seconds. */
const TARGET_SECONDS: Readonly<Record<BackendName, number>> = { sqlite: 1, postgres: 2 };
const INSERT_ROWS = 500;

interface Run {
  readonly seconds: number;
  readonly cpuSeconds: number;
}

interface BackendFigures {
  readonly accounts: number;
  readonly warm: Run;
  readonly cold: Run;
  readonly bare: Run;
  readonly ordersStored: number;
}

/** The strategies (each with its model account), owned by one person. */
async function populate(
  storage: Storage,
  clock: ControllableClock,
  count: number,
  email: string,
): Promise<{ owner: Caller; ids: number[]; accounts: Map<number, number> }> {
  const { personId } = await createPerson(
    { storage, clock },
    { email, firstName: "Fan", lastName: "Out", role: "person" },
  );
  const ids: number[] = [];
  const accounts = new Map<number, number>();
  await transaction(storage, async (tx) => {
    for (let first = 0; first < count; first += INSERT_ROWS) {
      const rows = await tx
        .insertInto("strategies")
        .values(
          Array.from({ length: Math.min(INSERT_ROWS, count - first) }, (_, i) => ({
            name: `Follower ${first + i + 1}`,
            owner_person_id: personId,
            white_label_site_id: null,
            is_private: 1,
            starting_capital: "100000",
            short_description: null,
            long_description: null,
            pending_short_description: null,
            pending_long_description: null,
            review_note: null,
            created_at: MARKET_OPEN_MS,
            updated_at: MARKET_OPEN_MS,
          })),
        )
        .returning("id")
        .execute();
      const made = await tx
        .insertInto("accounts")
        .values(
          rows.map((row) => ({
            kind: "model" as const,
            strategy_id: row.id,
            cash: "100000",
            starting_cash: "100000",
            commission_plan: "Default",
            created_at: MARKET_OPEN_MS,
          })),
        )
        .returning(["id", "strategy_id"])
        .execute();
      for (const account of made) accounts.set(account.strategy_id as number, account.id);
      ids.push(...rows.map((row) => row.id));
    }
  });
  const owner: Caller = {
    personId: asPersonId(personId),
    role: "person",
    whiteLabelSiteId: null,
    geoSiteId: null,
    platformId: null,
  };
  return { owner, ids, accounts };
}

const order = (strategyId: number, instrument: Instrument): OrderInput => ({
  strategyId,
  instrument,
  type: "limit",
  side: "buy",
  tif: "gtc",
  quantity: decimal("1"),
  limit: decimal("100"),
});

/** Times `work` on the wall clock and in this process's CPU. */
async function timed(work: () => Promise<void>): Promise<Run> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return {
    seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(3)),
  };
}

/**
 * One event: an order in each account, answered once every one of them is
 * durably committed. The orders are placed a chunk at a time, a turn of the
 * event loop between chunks, as the copier will: the batches of the first
 * chunks commit while the next are placed, and nothing else waits behind a
 * long run of placements.
 */
async function fanOut(ctx: TradingContext, ids: readonly number[], instrument: Instrument): Promise<void> {
  const placed: Promise<unknown>[] = [];
  for (let first = 0; first < ids.length; first += CHUNK) {
    if (first > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const id of ids.slice(first, first + CHUNK)) placed.push(placeOrder(ctx, order(id, instrument)));
  }
  await Promise.all(placed);
}

/** Orders placed between two turns of the event loop. */
const CHUNK = 500;

async function backendBench(backend: BackendName, pgUrl: string | undefined, count: number): Promise<BackendFigures> {
  const schema = `bench_fanout_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  const dataDir = backend === "sqlite" ? join(await tempDir("strategy-hub-bench-fanout-"), "data") : "";
  const storage = await openStorage(
    backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
  );
  let frame: TradingFrame | undefined;
  const close = onCleanup(`close ${backend} storage`, async () => {
    await frame?.close();
    await storage.close();
  });
  try {
    await migrateToLatest(storage);
    const clock = new ControllableClock(() => MARKET_OPEN_MS, { kind: "fixed", atMs: MARKET_OPEN_MS });
    progress(`${backend}: ${2 * count} strategies with their model accounts`);
    const warmGroup = await populate(storage, clock, count, "fanout-warm@example.com");
    const coldGroup = await populate(storage, clock, count, "fanout-cold@example.com");
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
    const runtime = { storage, clock, market, frame };
    // The followers of an active strategy are in memory: the warm accounts are loaded first.
    await frame.preload(warmGroup.ids);
    // A first, small event, so neither measured run pays for reserving ids or starting the journal.
    await fanOut({ ...runtime, caller: warmGroup.owner }, warmGroup.ids.slice(0, 10), instrument);
    progress(`${backend}: warm, an order in each of ${count} accounts in memory`);
    const warm = await timed(() => fanOut({ ...runtime, caller: warmGroup.owner }, warmGroup.ids, instrument));
    progress(`${backend}: cold, an order in each of ${count} accounts read first`);
    const cold = await timed(() => fanOut({ ...runtime, caller: coldGroup.owner }, coldGroup.ids, instrument));
    progress(`${backend}: bare, ${count} order rows in one multi-row transaction`);
    const bare = await timed(() =>
      transaction(storage, async (tx) => {
        for (let first = 0; first < count; first += INSERT_ROWS) {
          await tx
            .insertInto("orders")
            .values(
              warmGroup.ids.slice(first, first + INSERT_ROWS).map((strategyId) => ({
                strategy_id: strategyId,
                account_id: warmGroup.accounts.get(strategyId) as number,
                symbol: "AAPL",
                symbol_type: "stock",
                order_type: "limit" as const,
                side: "buy" as const,
                open_close: "open" as const,
                tif: "gtc" as const,
                quantity: "1",
                limit_price: "100",
                stop_price: null,
                profit_target: null,
                stop_loss: null,
                parent_id: null,
                oca_group_id: null,
                cancel_replace_id: null,
                parked_until: null,
                expires_at: null,
                signal_type: 1,
                status: "Working",
                info: null,
                posted_at: MARKET_OPEN_MS,
                updated_at: MARKET_OPEN_MS,
                closed_at: null,
                local_signal_id: null,
              })),
            )
            .execute();
        }
        // The bare rows are not the service's: they leave with the transaction.
        throw new BareDone();
      }).catch((error: unknown) => {
        if (!(error instanceof BareDone)) throw error;
      }),
    );
    const stored = await storage.db
      .selectFrom("orders")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .executeTakeFirstOrThrow();
    return { accounts: count, warm, cold, bare, ordersStored: Number(stored.n) };
  } finally {
    await close();
    await dropSchema?.();
  }
}

class BareDone extends Error {}

async function main(): Promise<void> {
  const count = positiveIntFromEnv("FANOUT_ACCOUNTS", 10_000);
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const results: [BackendName, BackendFigures][] = [];
  for (const backend of backends) results.push([backend, await backendBench(backend, pgUrl, count)]);

  console.log(
    `One event places one limit order (buy 1 AAPL at 100, GTC) in each of ${count} accounts through the trading ` +
      "frame (model accounts of as many strategies, until autotrade accounts exist); a run ends when every " +
      "order is durably committed. warm: the accounts are in the frame's memory; cold: they are read first. " +
      `bare: ${count} order rows stored in one multi-row transaction (rolled back), in the same run.`,
  );
  console.log("");
  printTable(
    ["", "accounts", "warm s", "warm cpu s", "cold s", "cold cpu s", "bare s", "warm/bare", "target", "holds"],
    results.map(([backend, r]) => [
      backend,
      String(r.accounts),
      r.warm.seconds.toFixed(3),
      r.warm.cpuSeconds.toFixed(3),
      r.cold.seconds.toFixed(3),
      r.cold.cpuSeconds.toFixed(3),
      r.bare.seconds.toFixed(3),
      (r.warm.seconds / r.bare.seconds).toFixed(1),
      `≤ ${TARGET_SECONDS[backend]} s`,
      r.warm.seconds <= TARGET_SECONDS[backend] && r.cold.seconds <= TARGET_SECONDS[backend] ? "yes" : "no",
    ]),
  );
  for (const [backend, r] of results) {
    const expected = 10 + 2 * r.accounts;
    if (r.ordersStored !== expected) throw new Error(`${backend}: ${r.ordersStored} orders stored, not ${expected}`);
  }
  console.log(`RESULT ${JSON.stringify({ accounts: count, results: Object.fromEntries(results) })}`);
}

await runBench(main);
