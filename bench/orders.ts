/**
 * `npm run bench:orders`: the cost of trading.
 *
 * 1. The order path over HTTP (bench/order-routes.ts), on embedded storage
 *    and, with DATABASE_URL, on PostgreSQL in a schema of its own: Hello,
 *    NewStrategyOrder resting (limit buys of 1 AAPL at 1) and filling (market
 *    buys of 1 AAPL, which fill inside the request) over 100 strategies,
 *    GetStrategyActiveOrders and GetStrategyOpenPositions; each beside a bare
 *    Fastify server answering the same route with the service's own answer,
 *    the two measured in turn over alternating rounds, with the ratio and
 *    issue 10's target. SQLite's NewStrategyOrder again at
 *    10 connections, each of its runs beside the bare server made durable too
 *    (bench/bare-store.ts), and the data directory's fdatasync time; on
 *    PostgreSQL the raw rate of one transaction per order over 8 connections,
 *    before the service starts and in turn with each order run's rounds.
 *    Every answer must be 200.
 * 2. The fill loop alone, in a process of its own on the node options of
 *    `npm start` (the service's runtime settings: the fill loop runs inside the
 *    service): 100,000 resting buy orders (limits and
 *    stops) of 1,000 strategies on 1,000 symbols; the index rebuild at start,
 *    then hand quotes fed one at a time: a quiet market that crosses no order,
 *    in rounds, each beside a bare index fed the same quotes
 *    (bench/bare-loop.ts), judged on the median round; then a moving market
 *    that fills some, in rounds on a few symbols each, judged on the median
 *    round; issue 10's targets.
 *
 * Env: BENCH_SECONDS (default 10) per server and route, split over
 * BENCH_ROUNDS (default 3) alternating rounds, and BENCH_CONNECTIONS
 * (default 50) for the HTTP runs; DATABASE_URL adds PostgreSQL (schemas bench_orders_<pid>
 * and bench_fill_loop_<pid>, dropped at the end, also on failure). Only
 * 127.0.0.1 (and the DATABASE_URL server) is contacted.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { ControllableClock } from "../src/core/clock.js";
import { decimal } from "../src/core/decimal.js";
import type { MarketQuote } from "../src/core/market/quote.js";
import { seededRandom } from "../src/core/random.js";
import { fromServiceSymbol } from "../src/core/symbols/instrument.js";
import { FillLoop } from "../src/engine/fill-loop.js";
import type { TradingFrame } from "../src/engine/frame/frame.js";
import { openFrame } from "../src/engine/frame/open.js";
import { MarketData } from "../src/engine/market-data.js";
import { createPerson } from "../src/services/people.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { transaction } from "../src/store/transaction.js";
import { type BareFigures, bareQuiet, buyHeadsOf, quoteRates } from "./bare-loop.js";
import {
  type BackendName,
  type HttpBackendFigures,
  type HttpSettings,
  httpBench,
  LOW_CONNECTIONS,
  printHttp,
  WARMUP_SECONDS,
} from "./order-routes.js";
import {
  MARKET_OPEN_MS,
  onCleanup,
  positiveIntFromEnv,
  printTable,
  progress,
  runBench,
  runChild,
  schemaOfOurOwn,
  startOptions,
  tempDir,
} from "./support.js";

const LOOP_STRATEGIES = 1_000;
const LOOP_SYMBOLS = 1_000;
const LOOP_ORDERS = 100_000;
const INSERT_ROWS = 1_000;
const INSERT_STATEMENTS_PER_TX = 10;
const QUIET_QUOTES = 200_000;
/**
 * The quiet market is fed in rounds, each through the loop then the bare
 * index, and judged on the median round: one round lasts a fraction of a
 * second, where a noisy machine's slow spell, or the collection of what the
 * rebuild left (the first round), would decide the figure alone.
 */
const QUIET_ROUNDS = 5;
const MOVING_QUOTES = 20_000;
const MOVING_SYMBOLS = 20;
/**
 * The moving market is fed in rounds too, each on symbols of its own (whose
 * resting orders no round has filled yet), and judged on the median round: a
 * round lasts under half a second, where the machine's noise moved a single
 * one by a fifth either way. A round first warms the path of fills (the first
 * fills of the process compile it: rounds ran 42k, 50-62k, then 60-72k
 * quotes/s on one machine), as the HTTP runs' warm-up second does; it is
 * printed apart.
 */
const MOVING_WARMUP_ROUNDS = 1;
const MOVING_ROUNDS = 3;
/** Quotes fed between two turns of the event loop. */
const YIELD_EVERY = 1_000;
/** The service's fill-loop tick, at which open trades' worst prices are worked. */
const TICK_MS = 1_000;
/**
 * Prices in cents. The quiet market keeps the ask inside [99.50, 100.50], so
 * the buy limits lie below it and the buy stops above it (a buy limit fills
 * once ask <= limit, a buy stop triggers once ask >= stop).
 */
const QUIET_LOW = 9_950;
const QUIET_HIGH = 10_050;
const LIMIT_LOW = 9_000;
const LIMIT_HIGH = 9_949;
const STOP_LOW = 10_051;
const STOP_HIGH = 11_000;
/**
 * The moving market: 1,000 quotes per symbol, steps of 5 cents, 62% of them with
 * the symbol's drift (1.2 cents a quote on average), so the walk reaches about
 * 88 or 112 at the end; kept within [88, 112].
 */
const MOVING_STEP = 5;
const MOVING_DRIFT_P = 0.62;
const MOVING_LOW = 8_800;
const MOVING_HIGH = 11_200;
/** Issue 10's targets for the loop with 100,000 resting orders, in quotes per second. */
const QUIET_TARGET = 1_000_000;
const MOVING_TARGET = 50_000;

// ---------------------------------------------------------------------------
// Part 2: the fill loop in process (part 1, over HTTP, is bench/order-routes.ts)

interface PhaseFigures {
  readonly quotes: number;
  readonly seconds: number;
  readonly quotesPerSec: number;
  readonly quoteP50Us: number;
  readonly quoteP99Us: number;
  readonly quoteMaxMs: number;
  /** Rows in `fills` after the phase (all phases so far). */
  readonly fills: number;
  readonly fillsInPhase: number;
  readonly workingOrders: number;
}

interface LoopFigures {
  readonly orders: number;
  readonly strategies: number;
  readonly symbols: number;
  readonly insertSeconds: number;
  readonly rebuildMs: number;
  readonly workingOrdersAfterRebuild: number;
  /** Each round of the quiet market through the loop, the first right after the rebuild. */
  readonly quiet: readonly PhaseFigures[];
  /** Each round's quotes through the bare index (bench/bare-loop.ts), right after the loop. */
  readonly bareQuiet: readonly BareFigures[];
  /** Each round of the moving market, on symbols of its own, the warm-up first. */
  readonly moving: readonly PhaseFigures[];
}

const cents = (value: number): string => (value / 100).toFixed(2);

/**
 * 4-letter tickers from an index ("QAAA", "QAAB", ...): letters only, and each
 * checked to be read back as the same stock, never as a forex pair or anything else.
 */
function tickers(count: number): string[] {
  const symbols: string[] = [];
  for (let i = 0; i < count; i++) {
    const letters = [Math.floor(i / 676) % 26, Math.floor(i / 26) % 26, i % 26].map((n) => String.fromCharCode(65 + n));
    const symbol = `Q${letters.join("")}`;
    const instrument = fromServiceSymbol(symbol);
    if (instrument?.symbolType !== "stock" || instrument.fullSymbol !== symbol) {
      throw new Error(`${symbol} is not read as a stock`);
    }
    symbols.push(symbol);
  }
  return symbols;
}

async function countFills(storage: Storage): Promise<number> {
  const row = await storage.db
    .selectFrom("fills")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Fills the database: one person, its strategies and the resting orders. */
async function populate(storage: Storage, clock: ControllableClock, symbols: readonly string[]): Promise<void> {
  const { personId } = await createPerson(
    { storage, clock },
    { email: "bench-owner@example.com", firstName: "Bench", lastName: "Owner", role: "person" },
  );
  const strategyIds: number[] = [];
  const accountOf = new Map<number, number>();
  await transaction(storage, async (tx) => {
    for (let first = 0; first < LOOP_STRATEGIES; first += 500) {
      const rows = await tx
        .insertInto("strategies")
        .values(
          Array.from({ length: Math.min(500, LOOP_STRATEGIES - first) }, (_, i) => ({
            name: `Bench ${first + i + 1}`,
            owner_person_id: personId,
            white_label_site_id: null,
            is_private: 0,
            starting_capital: "10000000",
            short_description: null,
            long_description: null,
            pending_short_description: null,
            pending_long_description: null,
            review_note: null,
            trades_stocks: 1,
            created_at: MARKET_OPEN_MS,
            updated_at: MARKET_OPEN_MS,
          })),
        )
        .returning("id")
        .execute();
      strategyIds.push(...rows.map((row) => row.id));
      const accounts = await tx
        .insertInto("accounts")
        .values(
          rows.map((row) => ({
            kind: "model" as const,
            strategy_id: row.id,
            cash: "10000000",
            starting_cash: "10000000",
            commission_plan: "Default",
            created_at: MARKET_OPEN_MS,
          })),
        )
        .returning(["id", "strategy_id"])
        .execute();
      for (const account of accounts) accountOf.set(account.strategy_id as number, account.id);
    }
  });
  const next = seededRandom(42);
  const ordersPerSymbol = LOOP_ORDERS / LOOP_SYMBOLS;
  const orderRow = (i: number) => {
    // Round-robin over the strategies; each symbol takes 100 consecutive orders, half limits and half stops.
    const isLimit = i % 2 === 0;
    const price = isLimit
      ? LIMIT_LOW + Math.floor(next() * (LIMIT_HIGH - LIMIT_LOW + 1))
      : STOP_LOW + Math.floor(next() * (STOP_HIGH - STOP_LOW + 1));
    const strategyId = strategyIds[i % LOOP_STRATEGIES] as number;
    return {
      strategy_id: strategyId,
      account_id: accountOf.get(strategyId) as number,
      symbol: symbols[Math.floor(i / ordersPerSymbol)] as string,
      symbol_type: "stock",
      order_type: isLimit ? ("limit" as const) : ("stop" as const),
      side: "buy" as const,
      open_close: "open" as const,
      tif: "gtc" as const,
      quantity: "1",
      limit_price: isLimit ? cents(price) : null,
      stop_price: isLimit ? null : cents(price),
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
    };
  };
  const perTx = INSERT_ROWS * INSERT_STATEMENTS_PER_TX;
  for (let first = 0; first < LOOP_ORDERS; first += perTx) {
    await transaction(storage, async (tx) => {
      for (let batch = first; batch < Math.min(first + perTx, LOOP_ORDERS); batch += INSERT_ROWS) {
        const rows = Array.from({ length: Math.min(INSERT_ROWS, LOOP_ORDERS - batch) }, (_, i) => orderRow(batch + i));
        await tx.insertInto("orders").values(rows).execute();
      }
    });
  }
}

/** A hand quote around an ask in cents: bid 2 cents under, last 1 cent under. */
function quoteOf(symbol: string, ask: number, atMs: number): MarketQuote {
  return {
    symbol,
    bid: decimal(cents(ask - 2)),
    ask: decimal(cents(ask)),
    last: decimal(cents(ask - 1)),
    bidSize: null,
    askSize: null,
    atMs,
  };
}

/** Feeds the quotes one at a time as the service does (set, then work), timing each. */
async function feed(
  label: string,
  storage: Storage,
  market: MarketData,
  loop: FillLoop,
  quotes: readonly MarketQuote[],
  fillsBefore: number,
): Promise<PhaseFigures> {
  const durations = new Float64Array(quotes.length);
  const reportEvery = Math.max(1, Math.floor(quotes.length / 4));
  const started = performance.now();
  let settled = started;
  for (let i = 0; i < quotes.length; i++) {
    // The loop alone never leaves the microtask queue; let the batches commit and signals (Ctrl-C) through
    // now and then: quotes keep coming while the fills of the last ones commit.
    if (i % YIELD_EVERY === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      // As the service's tick does (every second): open trades' new worst prices are worked.
      if (performance.now() - settled >= TICK_MS) {
        settled = performance.now();
        void loop.settleTrades();
      }
    }
    const quote = quotes[i] as MarketQuote;
    const t0 = performance.now();
    market.setQuote(quote);
    loop.quoteChanged(quote);
    durations[i] = performance.now() - t0;
    if ((i + 1) % reportEvery === 0) {
      progress(`  ${label}: ${i + 1} quotes, ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  }
  // The phase ends when all it filled is durably committed.
  await loop.settleTrades();
  const rates = quoteRates(durations, (performance.now() - started) / 1000);
  const fills = await countFills(storage);
  return {
    ...rates,
    fills,
    fillsInPhase: fills - fillsBefore,
    workingOrders: loop.index.workingOrders,
  };
}

async function fillLoopBench(backend: BackendName, pgUrl: string | undefined): Promise<LoopFigures> {
  const symbols = tickers(LOOP_SYMBOLS);
  const schema = `bench_fill_loop_${process.pid}`;
  // openStorage creates the schema; registering the drop first covers a failure half-way.
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  const dataDir = backend === "sqlite" ? join(await tempDir("strategy-hub-bench-fill-loop-"), "data") : "";
  const storage = await openStorage(
    backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
  );
  let loop: FillLoop | undefined;
  let frame: TradingFrame | undefined;
  const closeStorage = onCleanup(`close ${backend} storage`, async () => {
    await loop?.stop();
    await frame?.close();
    await storage.close();
  });
  try {
    await migrateToLatest(storage);
    const clock = new ControllableClock(() => MARKET_OPEN_MS, { kind: "fixed", atMs: MARKET_OPEN_MS });
    progress(`${backend} fill loop: inserting ${LOOP_STRATEGIES} strategies and ${LOOP_ORDERS} orders`);
    const insertStarted = performance.now();
    await populate(storage, clock, symbols);
    const insertSeconds = (performance.now() - insertStarted) / 1000;

    const market = new MarketData({ kind: "manual" }, clock);
    frame = openFrame(storage);
    loop = new FillLoop({ storage, clock, market, frame }, market, pino({ level: "silent" }), {
      tickMs: 0,
      systemNow: Date.now,
    });
    progress(`${backend} fill loop: rebuilding the index (start)`);
    const rebuildStarted = performance.now();
    await loop.start();
    const rebuildMs = performance.now() - rebuildStarted;
    const workingOrdersAfterRebuild = loop.index.workingOrders;
    if (workingOrdersAfterRebuild !== LOOP_ORDERS) {
      throw new Error(`the index holds ${workingOrdersAfterRebuild} working orders, not ${LOOP_ORDERS}`);
    }

    // Quiet: a walk of ±1 cent per quote and symbol, reflected inside the band, in rounds.
    const next = seededRandom(7);
    const asks = symbols.map(() => QUIET_LOW + Math.floor(next() * (QUIET_HIGH - QUIET_LOW + 1)));
    let atMs = MARKET_OPEN_MS;
    const resting = await storage.db.selectFrom("orders").select(["symbol", "limit_price", "stop_price"]).execute();
    const heads = buyHeadsOf(
      resting.map((o) => ({
        symbol: o.symbol,
        limit: o.limit_price === null ? null : decimal(o.limit_price),
        stop: o.stop_price === null ? null : decimal(o.stop_price),
      })),
    );
    const quietRounds: PhaseFigures[] = [];
    const bareQuietRounds: BareFigures[] = [];
    for (let round = 1; round <= QUIET_ROUNDS; round++) {
      const quiet: MarketQuote[] = [];
      for (let i = 0; i < QUIET_QUOTES; i++) {
        const s = i % LOOP_SYMBOLS;
        let ask = (asks[s] as number) + (next() < 0.5 ? -1 : 1);
        if (ask < QUIET_LOW) ask = QUIET_LOW + 1;
        if (ask > QUIET_HIGH) ask = QUIET_HIGH - 1;
        asks[s] = ask;
        quiet.push(quoteOf(symbols[s] as string, ask, atMs++));
      }
      progress(`${backend} fill loop: quiet market, round ${round} of ${QUIET_ROUNDS}: ${QUIET_QUOTES} quotes`);
      const figures = await feed(`quiet ${round}`, storage, market, loop, quiet, 0);
      if (figures.fills !== 0) throw new Error(`the quiet market filled ${figures.fills} orders`);
      progress(`${backend} fill loop: the same quiet quotes through the bare index`);
      const bare = await bareQuiet(quiet, heads, YIELD_EVERY);
      if (bare.crossed !== 0) throw new Error(`the bare index crossed ${bare.crossed} quiet quotes`);
      quietRounds.push(figures);
      bareQuietRounds.push(bare);
    }

    // Moving: each round's symbols leave the band, even ones upwards (buy stops trigger), odd ones downwards (buy limits fill).
    const movingRounds: PhaseFigures[] = [];
    let fillsBefore = 0;
    for (let round = 0; round < MOVING_WARMUP_ROUNDS + MOVING_ROUNDS; round++) {
      const first = round * MOVING_SYMBOLS;
      const moving: MarketQuote[] = [];
      for (let i = 0; i < MOVING_QUOTES; i++) {
        const s = first + (i % MOVING_SYMBOLS);
        const drift = s % 2 === 0 ? 1 : -1;
        const step = (next() < MOVING_DRIFT_P ? drift : -drift) * MOVING_STEP;
        const ask = Math.min(MOVING_HIGH, Math.max(MOVING_LOW, (asks[s] as number) + step));
        asks[s] = ask;
        moving.push(quoteOf(symbols[s] as string, ask, atMs++));
      }
      const reached = asks.slice(first, first + MOVING_SYMBOLS);
      const judged = round - MOVING_WARMUP_ROUNDS + 1;
      const roundName = judged < 1 ? "warm-up round" : `round ${judged} of ${MOVING_ROUNDS}`;
      progress(
        `${backend} fill loop: moving market, ${roundName}: ${MOVING_QUOTES} quotes on ` +
          `${MOVING_SYMBOLS} symbols (asks end between ${cents(Math.min(...reached))} and ${cents(Math.max(...reached))})`,
      );
      const figures = await feed(`moving ${round + 1}`, storage, market, loop, moving, fillsBefore);
      fillsBefore = figures.fills;
      movingRounds.push(figures);
    }

    return {
      orders: LOOP_ORDERS,
      strategies: LOOP_STRATEGIES,
      symbols: LOOP_SYMBOLS,
      insertSeconds: Number(insertSeconds.toFixed(2)),
      rebuildMs: Math.round(rebuildMs),
      workingOrdersAfterRebuild,
      quiet: quietRounds,
      bareQuiet: bareQuietRounds,
      moving: movingRounds,
    };
  } finally {
    await closeStorage();
    await dropSchema?.();
  }
}

// ---------------------------------------------------------------------------

/** The round with the median rate (rounds are odd in number). */
function medianRound<T extends { readonly quotesPerSec: number }>(rounds: readonly T[]): T {
  const sorted = [...rounds].sort((a, b) => a.quotesPerSec - b.quotesPerSec);
  return sorted[Math.floor(sorted.length / 2)] as T;
}

function printLoop(results: readonly [BackendName, LoopFigures][]): void {
  const first = results[0]?.[1];
  if (!first) return;
  console.log("");
  console.log(
    `2. Fill loop in a process of its own on npm start's node options (${startOptions().join(" ")}): ${first.orders} resting buy orders (GTC, 1 share; limits 90.00-99.49, stops 100.51-110.00) ` +
      `of ${first.strategies} strategies on ${first.symbols} stock symbols; hand quotes set then worked one at a time`,
  );
  console.log(
    `   quiet: ${QUIET_ROUNDS} rounds of ${QUIET_QUOTES} quotes, asks walking ±0.01 within 99.50-100.50 on every symbol, ` +
      "the first right after the rebuild; the row is the median round, beside the median bare round; " +
      `moving: ${MOVING_ROUNDS} rounds of ${MOVING_QUOTES} quotes after a warm-up round, each on ${MOVING_SYMBOLS} symbols ` +
      "of its own, steps of 0.05 drifting to 88 or 112, a round ending once all it filled is committed; the row is the " +
      "median round",
  );
  console.log(
    "   bare (quiet): each round's quotes, right after, through the least a quote that fills nothing costs: kept by " +
      "symbol, the symbol's ladder heads looked up, the ask compared with the highest buy limit and the lowest buy stop; " +
      "timed and fed alike",
  );
  console.log("");
  printTable(
    ["", "insert s", "rebuild ms", "working"],
    results.map(([backend, r]) => [
      backend,
      r.insertSeconds.toFixed(2),
      String(r.rebuildMs),
      String(r.workingOrdersAfterRebuild),
    ]),
  );
  console.log("");
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    for (const [label, p, bare, target] of [
      ["quiet", medianRound(r.quiet), medianRound(r.bareQuiet), QUIET_TARGET],
      ["quiet, 1st round", r.quiet[0] as PhaseFigures, r.bareQuiet[0] as BareFigures, null],
      ["moving", medianRound(r.moving.slice(MOVING_WARMUP_ROUNDS)), null, MOVING_TARGET],
      ["moving, warm-up round", r.moving[0] as PhaseFigures, null, null],
    ] as const) {
      rows.push([
        `${backend} ${label}`,
        String(p.quotes),
        p.seconds.toFixed(2),
        String(p.quotesPerSec),
        String(p.quoteP50Us),
        String(p.quoteP99Us),
        p.quoteMaxMs.toFixed(2),
        String(p.fillsInPhase),
        String(p.workingOrders),
        bare ? String(bare.quotesPerSec) : "-",
        bare ? `${((100 * p.quotesPerSec) / bare.quotesPerSec).toFixed(1)}%` : "-",
        target === null ? "-" : `≥ ${target}`,
        target === null ? "-" : p.quotesPerSec >= target ? "yes" : "no",
      ]);
    }
  }
  printTable(
    [
      "",
      "quotes",
      "s",
      "quotes/s",
      "p50 µs",
      "p99 µs",
      "max ms",
      "fills",
      "working",
      "bare quotes/s",
      "of bare",
      "target quotes/s",
      "holds",
    ],
    rows,
  );
}

/** Where the fill loop's process writes its figures. */
const LOOP_FIGURES_ENV = "BENCH_LOOP_FIGURES";

/**
 * Runs part 2 in a child process on the node options `npm start` gives the
 * service (read from package.json), since the fill loop runs inside the
 * service: the young generation's size among them, which decides how often a
 * fill's garbage is collected (docs/decisions.md, "The young generation's
 * size"). The child runs this file with the same environment.
 */
async function fillLoopOnServiceOptions(): Promise<[BackendName, LoopFigures][]> {
  const figuresPath = join(await tempDir("strategy-hub-bench-loop-"), "figures.json");
  await runChild("the fill loop's process", [...startOptions(), "--import", "tsx", fileURLToPath(import.meta.url)], {
    ...process.env,
    [LOOP_FIGURES_ENV]: figuresPath,
  });
  return JSON.parse(await readFile(figuresPath, "utf8")) as [BackendName, LoopFigures][];
}

async function main(): Promise<void> {
  const settings: HttpSettings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 50),
    rounds: positiveIntFromEnv("BENCH_ROUNDS", 3),
  };
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];

  // BENCH_PART=http or BENCH_PART=loop runs one part alone.
  const part = process.env.BENCH_PART ?? "";
  if (!["", "http", "loop"].includes(part)) throw new Error(`BENCH_PART must be http or loop, got ${part}`);
  const figuresPath = process.env[LOOP_FIGURES_ENV];
  if (figuresPath) {
    // The fill loop's process: part 2 alone, its figures to the file the bench reads.
    const loop: [BackendName, LoopFigures][] = [];
    for (const backend of backends) loop.push([backend, await fillLoopBench(backend, pgUrl)]);
    await writeFile(figuresPath, JSON.stringify(loop));
    return;
  }
  const http: [BackendName, HttpBackendFigures][] = [];
  if (part !== "loop") for (const backend of backends) http.push([backend, await httpBench(backend, settings, pgUrl)]);
  const loop = part === "http" ? [] : await fillLoopOnServiceOptions();

  printHttp(settings, http);
  printLoop(loop);
  console.log(
    `RESULT ${JSON.stringify({
      ...settings,
      lowConnections: LOW_CONNECTIONS,
      warmupSeconds: WARMUP_SECONDS,
      pipelining: 1,
      logLevel: "info",
      http: Object.fromEntries(http),
      fillLoop: Object.fromEntries(loop),
    })}`,
  );
}

await runBench(main);
