/**
 * `npm run bench:autotrade`: the autotrade reports over an account set of
 * 10,000 setups. A white-label site's 1,000 customers hold 10 brokerage
 * accounts each, every account following one strategy that holds AAPL and
 * has a working MSFT limit; a third of the accounts hold less AAPL than the
 * scaled strategy position (out of sync). Through the service (a child on
 * embedded storage and, with DATABASE_URL, on PostgreSQL in a schema of its
 * own), each beside a bare Fastify server answering the same route with the
 * service's own answer, in the same run:
 *
 * - GetAutotradeSyncStatusReport of one account after another (GEN, each
 *   request the next of the 10,000 accounts), the bare server serializing
 *   the recorded answer anew for each request;
 * - GetAutotradeStats of the site's day (WL: 10,000 daily snapshots, taken by
 *   the service's scheduled job), the bare server sending the recorded bytes.
 *
 * Env: AUTOTRADE_SETUPS (default 10000), BENCH_SECONDS (default 10),
 * BENCH_CONNECTIONS (default 50 for the report; the statistics, 11 MB an
 * answer that an administrator asks for now and then, at 2: at 10 the queue
 * of answers being written outlasts autocannon's 10 s timeout).
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ControllableClock } from "../src/core/clock.js";
import { decimal } from "../src/core/decimal.js";
import { asPersonId } from "../src/core/ids.js";
import { fromServiceSymbol, type Instrument } from "../src/core/symbols/instrument.js";
import { openFrame } from "../src/engine/frame/open.js";
import { MarketData } from "../src/engine/market-data.js";
import { placeOrder } from "../src/services/orders.js";
import { createPerson } from "../src/services/people.js";
import { createSite } from "../src/services/sites.js";
import { subscribe } from "../src/services/subscriptions.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { insertStrategy } from "../src/store/strategy-rows.js";
import { transaction } from "../src/store/transaction.js";
import { type Comparison, compareWithBare, measure, type Route, recordAnswer, startBare } from "./comparison.js";
import { insertFollowingAccounts } from "./following-accounts.js";
import {
  ADMIN_KEY,
  apiCall,
  type Figures,
  freePorts,
  HOST,
  JSON_HEADERS,
  MARKET_OPEN_ISO,
  MARKET_OPEN_MS,
  onCleanup,
  positiveIntFromEnv,
  printLogTail,
  printTable,
  progress,
  runBench,
  schemaOfOurOwn,
  startService,
  stopChild,
  storageBackend,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

type BackendName = "sqlite" | "postgres";

const ACCOUNTS_PER_CUSTOMER = 10;
const INSERT_ROWS = 500;
const WARMUP_SECONDS = 2;
const REPORT_PATH = "/Autotrade/GetAutotradeSyncStatusReport";
const STATS_PATH = "/Autotrade/GetAutotradeStats";
/** The strategy's holding and its followers': every third account holds less than its scaled share. */
const STRATEGY_AAPL = "100";
const FOLLOWER_AAPL = "100";
const SHORT_AAPL = "60";

interface Settings {
  readonly setups: number;
  readonly seconds: number;
  readonly reportConnections: number;
  readonly statsConnections: number;
}

interface Population {
  readonly siteId: number;
  /** Each account's number and holder, in the order the report route asks for them. */
  readonly accounts: readonly { readonly personId: number; readonly account: string }[];
  readonly insertSeconds: number;
}

interface RouteFigures {
  readonly comparison: Comparison;
  readonly connections: number;
  /** What one answer holds. */
  readonly rows: number;
}

interface BackendFigures {
  readonly storage: string;
  readonly insertSeconds: number;
  readonly report: RouteFigures;
  readonly stats: RouteFigures;
  /** Report rows of the first 30 accounts in sync and not, against what the population makes. */
  readonly inSync: number;
  readonly notInSync: number;
}

/**
 * The site, its customers, the followed strategy (its AAPL holding and MSFT
 * limit placed through the trading frame) and the setups with their holdings,
 * written straight to storage in multi-row statements.
 */
async function populate(storage: Storage, setups: number): Promise<Population> {
  const started = performance.now();
  const clock = new ControllableClock(() => MARKET_OPEN_MS, { kind: "fixed", atMs: MARKET_OPEN_MS });
  const runtime = { storage, clock };
  const site = await createSite(runtime, { kind: "whitelabel", name: "Bench Autotrade Site" });
  const owner = await createPerson(runtime, {
    email: "bench-owner@example.com",
    firstName: "Strategy",
    lastName: "Owner",
    role: "person",
  });
  const strategyId = await transaction(storage, (tx) =>
    insertStrategy(tx, {
      name: "Followed by ten thousand",
      owner: { id: owner.personId, white_label_site_id: null },
      startingCapital: decimal("100000"),
      isPublic: true,
      nowMs: MARKET_OPEN_MS,
    }),
  );
  await strategyHoldings(storage, clock, owner.personId, strategyId);

  const customers = Math.ceil(setups / ACCOUNTS_PER_CUSTOMER);
  const people: number[] = [];
  for (let i = 0; i < customers; i++) {
    const { personId } = await createPerson(runtime, {
      email: `bench-customer-${i}@example.com`,
      firstName: "Customer",
      lastName: `Number ${i}`,
      role: "person",
      siteId: site.id,
    });
    // A live subscription: the desk stops setups of people who no longer follow the strategy.
    await subscribe(runtime, strategyId, personId, null);
    people.push(personId);
  }
  const accounts = Array.from({ length: setups }, (_, i) => ({
    personId: people[Math.floor(i / ACCOUNTS_PER_CUSTOMER)] as number,
    account: `BENCH-AT-${i}`,
  }));
  await transaction(storage, async (tx) => {
    const ids = await insertFollowingAccounts(tx, {
      strategyId,
      siteId: site.id,
      accounts,
      atMs: MARKET_OPEN_MS,
      atBroker: false,
    });
    // Every third account holds less AAPL than the scaled strategy position.
    for (let first = 0; first < ids.length; first += INSERT_ROWS) {
      await tx
        .insertInto("autotrade_positions")
        .values(
          ids.slice(first, first + INSERT_ROWS).map((accountId, i) => {
            const quantity = (first + i) % 3 === 0 ? SHORT_AAPL : FOLLOWER_AAPL;
            return {
              account_id: accountId,
              strategy_id: strategyId,
              symbol: "AAPL",
              symbol_type: "stock",
              quantity,
              cost: String(Number(quantity) * 200),
              opened_at: MARKET_OPEN_MS,
            };
          }),
        )
        .execute();
    }
  });
  return { siteId: site.id, accounts, insertSeconds: (performance.now() - started) / 1000 };
}

/** The strategy buys AAPL at the market and rests a MSFT limit buy, through the trading frame. */
async function strategyHoldings(
  storage: Storage,
  clock: ControllableClock,
  ownerId: number,
  strategyId: number,
): Promise<void> {
  const market = new MarketData({ kind: "manual" }, clock);
  for (const [symbol, bid, ask] of [
    ["AAPL", "200", "200.05"],
    ["MSFT", "400", "400.1"],
  ] as const) {
    market.setQuote({
      symbol,
      bid: decimal(bid),
      ask: decimal(ask),
      last: decimal(bid),
      bidSize: null,
      askSize: null,
      atMs: MARKET_OPEN_MS,
    });
  }
  const frame = openFrame(storage);
  try {
    const ctx = {
      storage,
      clock,
      market,
      frame,
      caller: {
        personId: asPersonId(ownerId),
        role: "person" as const,
        whiteLabelSiteId: null,
        geoSiteId: null,
        platformId: null,
      },
    };
    const stock = (symbol: string) => fromServiceSymbol(symbol) as Instrument;
    await placeOrder(ctx, {
      strategyId,
      instrument: stock("AAPL"),
      type: "market",
      side: "buy",
      tif: "day",
      quantity: decimal(STRATEGY_AAPL),
    });
    await placeOrder(ctx, {
      strategyId,
      instrument: stock("MSFT"),
      type: "limit",
      side: "buy",
      tif: "gtc",
      quantity: decimal("50"),
      limit: decimal("350"),
    });
  } finally {
    await frame.close();
  }
}

/** A route asking one report after another, each for the next account. */
function reportRoute(population: Population): Route {
  return {
    method: "GET",
    path: REPORT_PATH,
    request: (i) => {
      const { personId, account } = population.accounts[i % population.accounts.length] as Population["accounts"][0];
      return { path: `${REPORT_PATH}?PersonId=${personId}&Account=${account}` };
    },
  };
}

async function statsComparison(
  port: number,
  siteId: number,
  settings: Settings,
  dir: string,
): Promise<{ comparison: Comparison; rows: number }> {
  const path = `${STATS_PATH}?WhiteLabelSiteId=${siteId}`;
  const route: Route = { method: "GET", path: STATS_PATH, request: () => ({ path }) };
  const answer = await recordAnswer("GetAutotradeStats", port, route);
  const rows = (JSON.parse(answer) as { Results: unknown[] }).Results.length;
  const run = { seconds: settings.seconds, connections: settings.statsConnections };
  await measure("GetAutotradeStats warm-up", port, route, WARMUP_SECONDS, run.connections);
  const service = await measure("GetAutotradeStats", port, route, run.seconds, run.connections);
  // The same bytes, sent as they are: the upper bound of a server answering this much.
  const bare = await startBare("bare GetAutotradeStats", route, answer, dir, "bytes");
  let bareRun: Awaited<ReturnType<typeof measure>>;
  try {
    await measure("bare GetAutotradeStats warm-up", bare.port, route, WARMUP_SECONDS, run.connections);
    bareRun = await measure("bare GetAutotradeStats", bare.port, route, run.seconds, run.connections);
  } finally {
    await stopChild(bare.child);
  }
  const bareRate = bareRun.figures.requestsPerSec;
  return {
    rows,
    comparison: {
      service,
      bare: bareRun,
      answerBytes: Buffer.byteLength(answer),
      ratio: bareRate > 0 ? Number((service.figures.requestsPerSec / bareRate).toFixed(3)) : null,
      durable: null,
      ofDurable: null,
      serviceAnswers: 0,
    },
  };
}

/** What the first accounts' reports say of AAPL, against the population: in sync but for every third. */
async function checkReports(port: number, population: Population): Promise<{ inSync: number; notInSync: number }> {
  let inSync = 0;
  let notInSync = 0;
  for (const [i, { personId, account }] of population.accounts.slice(0, 30).entries()) {
    const { results } = await apiCall(port, "GET", `${REPORT_PATH}?PersonId=${personId}&Account=${account}`);
    const rows = results as { ReportType: number; InSync: boolean; AccountQuantity: number }[];
    const aapl = rows.find((row) => row.ReportType === 1);
    if (!aapl || rows.length !== 2) throw new Error(`account ${account}: ${rows.length} report rows, not 2`);
    if (aapl.AccountQuantity !== Number(i % 3 === 0 ? SHORT_AAPL : FOLLOWER_AAPL))
      throw new Error(`account ${account}: AccountQuantity ${aapl.AccountQuantity}`);
    if (aapl.InSync) inSync++;
    else notInSync++;
  }
  return { inSync, notInSync };
}

async function backendBench(
  backend: BackendName,
  settings: Settings,
  pgUrl: string | undefined,
): Promise<BackendFigures> {
  const dir = await tempDir(`strategy-hub-bench-autotrade-${backend}-`);
  const dataDir = join(dir, "data");
  const logPath = join(dir, "service.log");
  const schema = `bench_autotrade_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  let service: ChildProcess | undefined;
  try {
    const storage = await openStorage(
      backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
    );
    const closeStorage = onCleanup(`close ${backend} storage`, () => storage.close());
    let population: Population;
    try {
      await migrateToLatest(storage);
      progress(`${backend}: ${settings.setups} setups of a white-label site's customers`);
      population = await populate(storage, settings.setups);
    } finally {
      await closeStorage();
    }
    progress(`${backend}: written in ${population.insertSeconds.toFixed(1)} s; starting the service`);
    const ports = await freePorts(4);
    const [wl = 0, gen = 0] = ports;
    service = startService(ports, dataDir, ADMIN_KEY, logPath, {
      SANDBOX: "1",
      MARKET_FEED: "manual",
      ...(backend === "postgres" ? { DATABASE_URL: pgUrl as string, PGOPTIONS: `-c search_path=${schema}` } : {}),
    });
    await waitUntilAnswering(
      "service",
      service,
      `http://${HOST}:${gen}/General/Hello`,
      { method: "POST", headers: JSON_HEADERS, body: "{}" },
      (status) => status === 200,
    );
    for (const [symbol, bid, ask] of [
      ["AAPL", 200, 200.05],
      ["MSFT", 400, 400.1],
    ] as const) {
      await apiCall(gen, "POST", "/Sandbox/SetQuote", { Symbol: symbol, Bid: bid, Ask: ask, Last: bid });
    }
    // Setting the clock runs the scheduled jobs: the day's snapshot of every account is taken.
    await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: MARKET_OPEN_ISO });
    const checked = await checkReports(gen, population);
    const run = { seconds: settings.seconds, warmupSeconds: WARMUP_SECONDS, connections: settings.reportConnections };
    progress(`${backend}: GetAutotradeSyncStatusReport, then beside the bare server`);
    const route = reportRoute(population);
    const report = await compareWithBare(`${backend} report`, gen, route, run, dir);
    const reportRows = (JSON.parse(await recordAnswer("report", gen, route)) as { Results: unknown[] }).Results.length;
    progress(`${backend}: GetAutotradeStats of the site's day, then beside the bare server`);
    const stats = await statsComparison(wl, population.siteId, settings, dir);
    if (stats.rows !== settings.setups) throw new Error(`GetAutotradeStats answered ${stats.rows} snapshots`);
    return {
      storage: await storageBackend(logPath),
      insertSeconds: Number(population.insertSeconds.toFixed(1)),
      report: { comparison: report, connections: settings.reportConnections, rows: reportRows },
      stats: { comparison: stats.comparison, connections: settings.statsConnections, rows: stats.rows },
      ...checked,
    };
  } catch (error) {
    await printLogTail(`${backend} service`, logPath);
    throw error;
  } finally {
    if (service) await stopChild(service);
    await dropSchema?.();
  }
}

function print(settings: Settings, results: readonly [BackendName, BackendFigures][]): void {
  console.log(
    `${settings.setups} autotrade setups: ${settings.setups / ACCOUNTS_PER_CUSTOMER} customers of one white-label site, ` +
      `${ACCOUNTS_PER_CUSTOMER} brokerage accounts each, each following one strategy that holds ${STRATEGY_AAPL} AAPL ` +
      `and works a MSFT limit; every third account holds ${SHORT_AAPL} AAPL, the others ${FOLLOWER_AAPL}. ` +
      `${settings.seconds} s per run after ${WARMUP_SECONDS} s of warm-up, pipelining 1; the service at LOG_LEVEL info, ` +
      "every answer 200.",
  );
  console.log("");
  const row = (name: string, backend: string, r: RouteFigures): string[] => {
    const { service, bare, ratio, answerBytes } = r.comparison;
    const s: Figures = service.figures;
    return [
      `${backend} ${name}`,
      String(r.connections),
      String(r.rows),
      String(answerBytes),
      s.requestsPerSec.toFixed(1),
      bare.figures.requestsPerSec.toFixed(1),
      ratio === null ? "-" : ratio.toFixed(3),
      String(s.latencyP50Ms),
      String(s.latencyP99Ms),
      String(bare.figures.latencyP99Ms),
    ];
  };
  printTable(
    ["", "conns", "rows", "bytes", "req/s", "bare req/s", "ratio", "p50 ms", "p99 ms", "bare p99 ms"],
    results.flatMap(([backend, r]) => [
      row("GetAutotradeSyncStatusReport", r.storage === backend ? backend : `${backend} (${r.storage})`, r.report),
      row("GetAutotradeStats (the site's day)", backend, r.stats),
    ]),
  );
  console.log("");
  console.log(
    "   report: each request the next account's report (GEN), the bare server serializing one recorded report anew " +
      "for each request; stats: the site's day of snapshots (WL), the bare server sending the recorded bytes.",
  );
  for (const [backend, r] of results) {
    console.log(
      `   ${backend}: written in ${r.insertSeconds} s; the first 30 reports: ${r.inSync} accounts in sync, ${r.notInSync} not`,
    );
  }
}

async function main(): Promise<void> {
  const connections = process.env.BENCH_CONNECTIONS ? positiveIntFromEnv("BENCH_CONNECTIONS", 50) : undefined;
  const settings: Settings = {
    setups: positiveIntFromEnv("AUTOTRADE_SETUPS", 10_000),
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    reportConnections: connections ?? 50,
    statsConnections: connections ?? 2,
  };
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const results: [BackendName, BackendFigures][] = [];
  for (const backend of backends) results.push([backend, await backendBench(backend, settings, pgUrl)]);
  print(settings, results);
  console.log(
    `RESULT ${JSON.stringify({ ...settings, warmupSeconds: WARMUP_SECONDS, backends: Object.fromEntries(results) })}`,
  );
}

await runBench(main);
