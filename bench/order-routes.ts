/**
 * Part 1 of `npm run bench:orders`: the order path over HTTP, each route of
 * the service (GEN server, as `npm start` runs it, access log included) beside
 * the bare server answering the same route with the service's own answer
 * (bench/comparison.ts), with the targets of issue 10 and whether they hold,
 * and how busy each run kept the server's event loop and the machine.
 * On SQLite each NewStrategyOrder run is also measured on the bare server
 * made durable (bench/bare-store.ts), and the data directory's fdatasync time
 * is probed; on PostgreSQL the raw rate of one transaction per order over 8
 * connections (bench/raw-pg.ts) is measured before the service starts, and
 * again in turn with each NewStrategyOrder run's rounds: the target's figure.
 */
import type { ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { decimal, toNumber } from "../src/core/decimal.js";
import {
  type Comparison,
  compareWithBare,
  type Route,
  type Run,
  type RunSettings,
  rateOver,
  secondsPerRound,
} from "./comparison.js";
import { openRawPg, type RawPg, type RawPgFigures, type RawPgRound, rawPgBaseline, rawPgFigures } from "./raw-pg.js";
import {
  ADMIN_KEY,
  apiCall,
  createStrategies,
  exited,
  fdatasyncProbe,
  freePorts,
  HOST,
  JSON_HEADERS,
  MARKET_OPEN_ISO,
  printLogTail,
  printTable,
  progress,
  type SyncFigures,
  schemaOfOurOwn,
  sharesHeld,
  simulatedAapl,
  startService,
  stopChild,
  storageBackend,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

export type BackendName = "sqlite" | "postgres";

export interface HttpSettings {
  /** Each server's measured time per route, split over the rounds (comparison.ts secondsPerRound). */
  readonly seconds: number;
  readonly connections: number;
  /** Rounds in which the service and the bare servers are measured in turn. */
  readonly rounds: number;
}

export const WARMUP_SECONDS = 1;
/** The issue's targets are stated at this many connections. */
const TARGET_CONNECTIONS = 50;
/** SQLite's NewStrategyOrder is measured again at this many connections (it has a target there too). */
export const LOW_CONNECTIONS = 10;
const RAW_PG_CONNECTIONS = 8;
const ORDER_STRATEGIES = 100;
const ORDER_PATH = "/Strategies/NewStrategyOrder";
const HELLO_PATH = "/General/Hello";
const ACTIVE_ORDERS_PATH = "/Strategies/GetStrategyActiveOrders";
const OPEN_POSITIONS_PATH = "/Strategies/GetStrategyOpenPositions";
/** The strategies the GET routes read: each holds a position in every symbol and resting orders in each. */
const READ_STRATEGIES = 10;
const READ_SYMBOLS = ["MSFT", "IBM", "KO", "INTC", "CSCO"] as const;
const READ_POSITION_SHARES = 10;
const READ_RESTING_PER_SYMBOL = 2;

export type RouteName =
  | "Hello"
  | "NewStrategyOrder resting"
  | "NewStrategyOrder filling"
  | "GetStrategyActiveOrders"
  | "GetStrategyOpenPositions";

/** A target of issue 10: a share of the bare server's rate (and a p99 bound), or the raw PostgreSQL rate. */
type Target = { readonly ofBare: number; readonly maxP99Ms?: number } | { readonly ofRawPg: true };

export interface RouteFigures {
  readonly route: RouteName;
  readonly connections: number;
  readonly comparison: Comparison;
  /** PostgreSQL's order runs: the raw rate measured in turn with the run's rounds (the target's figure). */
  readonly rawPg: RawPgFigures | null;
  readonly target: string;
  readonly holds: boolean;
}

export interface HttpBackendFigures {
  readonly storage: string;
  /** SQLite: fdatasync of a small append in the data directory, probed before the runs. */
  readonly fdatasync: SyncFigures | null;
  /**
   * PostgreSQL: one transaction per order over 8 connections, measured before
   * the service started (each order run's own, in turn with it, is its route's).
   */
  readonly rawPg: RawPgFigures | null;
  readonly routes: readonly RouteFigures[];
  /** What the order runs left behind, by connections: they must match what was placed. */
  readonly orderChecks: readonly OrderChecks[];
}

/** An order route's comparison, and on PostgreSQL the raw rate measured in turn with it. */
interface RunsOf {
  readonly comparison: Comparison;
  readonly rawPg: RawPgFigures | null;
}

interface OrderChecks {
  readonly connections: number;
  readonly restingOrdersPlaced: number;
  readonly positionsAfterResting: number;
  readonly fillingOrdersPlaced: number;
  readonly sharesHeldAfterFilling: number;
}

function targetOf(backend: BackendName, route: RouteName, connections: number): Target {
  if (route === "Hello") return { ofBare: 0.5 };
  if (route === "GetStrategyActiveOrders" || route === "GetStrategyOpenPositions") return { ofBare: 0.35 };
  if (backend === "postgres") return { ofRawPg: true };
  if (connections === LOW_CONNECTIONS) return { ofBare: 0.25 };
  return route === "NewStrategyOrder resting" ? { ofBare: 0.5, maxP99Ms: 20 } : { ofBare: 0.4, maxP99Ms: 20 };
}

function judged(target: Target, comparison: Comparison, rawPg: RawPgFigures | null): { text: string; holds: boolean } {
  const service = comparison.service.figures;
  if ("ofRawPg" in target) {
    const raw = rawPg?.transactionsPerSec ?? Number.POSITIVE_INFINITY;
    return { text: `≥ raw PG ${raw} tx/s`, holds: service.requestsPerSec >= raw };
  }
  const ratioHolds = comparison.ratio !== null && comparison.ratio >= target.ofBare;
  const p99Holds = target.maxP99Ms === undefined || service.latencyP99Ms <= target.maxP99Ms;
  return {
    text: `≥ ${target.ofBare * 100}% of bare${target.maxP99Ms === undefined ? "" : `, p99 ≤ ${target.maxP99Ms} ms`}`,
    holds: ratioHolds && p99Holds,
  };
}

const helloRoute: Route = {
  method: "POST",
  path: HELLO_PATH,
  request: () => ({ path: HELLO_PATH, body: JSON.stringify({ Name: "Bob" }) }),
};

/** NewStrategyOrder, each request for the next strategy in turn. */
function orderRoute(strategyIds: readonly number[], order: (strategyId: number) => object): Route {
  return {
    method: "POST",
    path: ORDER_PATH,
    request: (i) => ({
      path: ORDER_PATH,
      body: JSON.stringify({ Order: order(strategyIds[i % strategyIds.length] as number) }),
    }),
  };
}

/** A GET of one strategy's records, each request for the next strategy in turn. */
function readRoute(path: string, strategyIds: readonly number[]): Route {
  return {
    method: "GET",
    path,
    request: (i) => ({ path: `${path}?StrategyIds=${strategyIds[i % strategyIds.length]}` }),
  };
}

function limitBuy(strategyId: number, symbol = "AAPL") {
  return {
    StrategyId: strategyId,
    OrderType: "2",
    Side: "1",
    TIF: "1",
    OrderQuantity: 1,
    Limit: 1,
    ServiceSymbol: { FullSymbol: symbol },
  };
}

function marketBuy(strategyId: number, symbol = "AAPL", quantity = 1) {
  return {
    StrategyId: strategyId,
    OrderType: "1",
    Side: "1",
    TIF: "1",
    OrderQuantity: quantity,
    ServiceSymbol: { FullSymbol: symbol },
  };
}

/**
 * Resting limit buys, then market buys that fill in the request, on the same
 * strategies (so each still holds its resting orders), each beside the bare
 * server; checks that nothing rested filled and every market order did.
 */
async function orderRuns(
  backend: BackendName,
  gen: number,
  strategyIds: readonly number[],
  settings: RunSettings,
  dir: string,
  servicePid: number | undefined,
  raw: RawPg | null,
): Promise<{ resting: RunsOf; filling: RunsOf; checks: OrderChecks }> {
  const at = `${backend}, ${settings.connections} connections`;
  const beside =
    backend === "sqlite"
      ? "the bare server, plain and durable"
      : `the bare server and the raw rate over ${RAW_PG_CONNECTIONS} connections`;
  // On SQLite the bare server also stores each order durably, as the service's journal does;
  // on PostgreSQL the raw rate is measured in turn with each round.
  const compared = async (name: string, route: Route): Promise<RunsOf> => {
    const rounds: RawPgRound[] = [];
    const comparison = await compareWithBare(name, gen, route, settings, dir, servicePid, {
      durable: backend === "sqlite",
      ...(raw
        ? {
            alongside: async (seconds: number, warmUp: boolean) => {
              const round = await raw.round(seconds);
              if (!warmUp) rounds.push(round);
            },
          }
        : {}),
    });
    return { comparison, rawPg: raw ? rawPgFigures(raw.connections, rounds) : null };
  };
  progress(`${at}: NewStrategyOrder resting, then beside ${beside}`);
  const resting = await compared(`${backend} resting ${settings.connections}`, orderRoute(strategyIds, limitBuy));
  const positionsAfterResting = await sharesHeld(gen, strategyIds);
  if (positionsAfterResting !== 0) throw new Error(`resting limit orders filled: ${positionsAfterResting} shares held`);
  // Market orders fill against a hand quote at the simulated prices, without a size (unlimited).
  const aapl = simulatedAapl();
  await apiCall(gen, "POST", "/Sandbox/SetQuote", {
    Symbol: "AAPL",
    Bid: toNumber(aapl.bid),
    Ask: toNumber(aapl.ask),
    Last: toNumber(aapl.last),
  });
  progress(`${at}: NewStrategyOrder filling, then beside ${beside}`);
  const filling = await compared(`${backend} filling ${settings.connections}`, orderRoute(strategyIds, marketBuy));
  const sharesHeldAfterFilling = await sharesHeld(gen, strategyIds);
  // Requests cut off at the end of a run may still be served, so the service can hold a few more.
  if (sharesHeldAfterFilling < filling.comparison.serviceAnswers) {
    throw new Error(
      `market orders did not fill in the request: ${filling.comparison.serviceAnswers} placed, ${sharesHeldAfterFilling} held`,
    );
  }
  return {
    resting,
    filling,
    checks: {
      connections: settings.connections,
      restingOrdersPlaced: resting.comparison.serviceAnswers,
      positionsAfterResting,
      fillingOrdersPlaced: filling.comparison.serviceAnswers,
      sharesHeldAfterFilling,
    },
  };
}

/** The strategies the GET routes read, each with a position in every read symbol and resting orders in each. */
async function readStrategies(gen: number): Promise<number[]> {
  for (const symbol of READ_SYMBOLS) {
    await apiCall(gen, "POST", "/Sandbox/SetQuote", { Symbol: symbol, Bid: 100, Ask: 100.05, Last: 100 });
  }
  const strategyIds = await createStrategies(gen, READ_STRATEGIES, "Bench reader");
  for (const strategyId of strategyIds) {
    for (const symbol of READ_SYMBOLS) {
      await apiCall(gen, "POST", ORDER_PATH, { Order: marketBuy(strategyId, symbol, READ_POSITION_SHARES) });
      for (let i = 0; i < READ_RESTING_PER_SYMBOL; i++) {
        await apiCall(gen, "POST", ORDER_PATH, { Order: limitBuy(strategyId, symbol) });
      }
    }
  }
  const first = strategyIds[0] as number;
  const active = (await apiCall(gen, "GET", `${ACTIVE_ORDERS_PATH}?StrategyIds=${first}`)).results.length;
  const held = (await apiCall(gen, "GET", `${OPEN_POSITIONS_PATH}?StrategyIds=${first}`)).results.length;
  if (active !== READ_SYMBOLS.length * READ_RESTING_PER_SYMBOL || held !== READ_SYMBOLS.length) {
    throw new Error(`a read strategy holds ${active} active orders and ${held} positions`);
  }
  return strategyIds;
}

export async function httpBench(
  backend: BackendName,
  settings: HttpSettings,
  pgUrl: string | undefined,
): Promise<HttpBackendFigures> {
  const dir = await tempDir(`strategy-hub-bench-orders-${backend}-`);
  const logPath = join(dir, "service.log");
  const dataDir = join(dir, "data");
  const schema = `bench_orders_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, true) : null;
  let service: ChildProcess | undefined;
  let raw: RawPg | null = null;
  try {
    let rawPg: RawPgFigures | null = null;
    if (backend === "postgres") {
      progress(`postgres: raw rate of one transaction per order over ${RAW_PG_CONNECTIONS} connections`);
      rawPg = await rawPgBaseline(pgUrl as string, schema, RAW_PG_CONNECTIONS, settings.seconds, WARMUP_SECONDS);
      // The same again in turn with each order run: the target's figure.
      raw = await openRawPg(pgUrl as string, schema, RAW_PG_CONNECTIONS);
    }
    const ports = await freePorts(4);
    const gen = ports[1] ?? 0;
    service = startService(ports, dataDir, ADMIN_KEY, logPath, {
      SANDBOX: "1",
      MARKET_FEED: "simulated",
      // The service's pool takes its search_path from PGOPTIONS.
      ...(backend === "postgres" ? { DATABASE_URL: pgUrl as string, PGOPTIONS: `-c search_path=${schema}` } : {}),
    });
    const child = service;
    progress(`${backend}: waiting for the service (GEN :${gen})`);
    await waitUntilAnswering(
      "service",
      child,
      `http://${HOST}:${gen}${HELLO_PATH}`,
      { method: "POST", headers: JSON_HEADERS, body: "{}" },
      (status) => status === 200,
    );
    await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: MARKET_OPEN_ISO });
    let fdatasync: SyncFigures | null = null;
    if (backend === "sqlite") {
      progress("sqlite: probing fdatasync in the data directory");
      fdatasync = fdatasyncProbe(dataDir);
    }

    const routes: RouteFigures[] = [];
    const note = (
      route: RouteName,
      connections: number,
      comparison: Comparison,
      rawInTurn: RawPgFigures | null = null,
    ) => {
      if (exited(child)) throw new Error(`the service exited during the ${route} run`);
      const { text, holds } = judged(targetOf(backend, route, connections), comparison, rawInTurn);
      routes.push({ route, connections, comparison, rawPg: rawInTurn, target: text, holds });
    };
    const at = (connections: number): RunSettings => ({
      seconds: settings.seconds,
      warmupSeconds: WARMUP_SECONDS,
      connections,
      rounds: settings.rounds,
    });

    progress(`${backend}: Hello, then beside the bare server`);
    note(
      "Hello",
      settings.connections,
      await compareWithBare(`${backend} Hello`, gen, helloRoute, at(settings.connections), dir, child.pid),
    );

    const orderConnections = [settings.connections];
    if (backend === "sqlite" && settings.connections !== LOW_CONNECTIONS) orderConnections.push(LOW_CONNECTIONS);
    const orderChecks: OrderChecks[] = [];
    for (const connections of orderConnections) {
      // Fresh strategies for each pair of runs, so none pays for the orders another left.
      progress(`${backend}: creating ${ORDER_STRATEGIES} strategies`);
      const strategyIds = await createStrategies(gen, ORDER_STRATEGIES, `Bench ${connections}`);
      const runs = await orderRuns(backend, gen, strategyIds, at(connections), dir, child.pid, raw);
      note("NewStrategyOrder resting", connections, runs.resting.comparison, runs.resting.rawPg);
      note("NewStrategyOrder filling", connections, runs.filling.comparison, runs.filling.rawPg);
      orderChecks.push(runs.checks);
    }

    progress(`${backend}: ${READ_STRATEGIES} strategies with positions and resting orders to read`);
    const readIds = await readStrategies(gen);
    for (const [route, path] of [
      ["GetStrategyActiveOrders", ACTIVE_ORDERS_PATH],
      ["GetStrategyOpenPositions", OPEN_POSITIONS_PATH],
    ] as const) {
      progress(`${backend}: ${route}, then beside the bare server`);
      const comparison = await compareWithBare(
        `${backend} ${route}`,
        gen,
        readRoute(path, readIds),
        at(settings.connections),
        dir,
        child.pid,
      );
      note(route, settings.connections, comparison);
    }
    return { storage: await storageBackend(logPath), fdatasync, rawPg, routes, orderChecks };
  } catch (error) {
    await printLogTail(`${backend} service`, logPath);
    throw error;
  } finally {
    if (service) await stopChild(service);
    await raw?.close();
    await dropSchema?.();
  }
}

export function printHttp(settings: HttpSettings, results: readonly [BackendName, HttpBackendFigures][]): void {
  // BENCH_PART=loop measured nothing over HTTP.
  if (results.length === 0) return;
  const aapl = simulatedAapl();
  console.log(
    `1. Over HTTP on GEN, per server and route ${settings.rounds} alternating rounds of ` +
      `${secondsPerRound(settings.seconds, settings.rounds)} s (service, bare, durable bare in turn) ` +
      `after ${WARMUP_SECONDS} s of warm-up each, pipelining 1; the service ` +
      "as `npm start` runs it, at the default LOG_LEVEL (info: one access-log line per request), SANDBOX=1, " +
      `MARKET_FEED=simulated, clock at ${MARKET_OPEN_ISO}; every answer was 200`,
  );
  console.log(
    "   bare: a Fastify child process answering the same method and path with the service's recorded answer " +
      "(same shape and size, serialized per request), reading and parsing the request body as the service does; " +
      "no auth, rate limit, logging or storage; measured in turn with the service at the same settings",
  );
  console.log(
    `   Hello: POST ${HELLO_PATH} {"Name":"Bob"}; resting: limit buy 1 AAPL at 1 (rests; simulated AAPL ` +
      `${toNumber(aapl.bid)} x ${toNumber(aapl.ask)}, ask size ${toNumber(aapl.askSize ?? decimal(0))}), over ` +
      `${ORDER_STRATEGIES} strategies in turn; filling: market buy 1 AAPL (fills in the request against a hand ` +
      "quote at the same prices with unlimited size, set after the first resting run), run second on the same " +
      "strategies; fresh strategies for each number of connections",
  );
  console.log(
    `   GETs: one of ${READ_STRATEGIES} strategies in turn, each holding ${READ_SYMBOLS.length} positions and ` +
      `${READ_SYMBOLS.length * READ_RESTING_PER_SYMBOL} resting orders`,
  );
  console.log(
    "   CPU µs/req: the server process's CPU time (all its threads; on PostgreSQL the database's own processes " +
      "not counted) per request completed in the run, a figure the machine's noise moves less than req/s",
  );
  console.log(
    "   1st s / last s: requests the service completed in the first second of the first round and the last of the " +
      "last; req/s, p50, p99, CPU µs/req, loop and machine busy: over all rounds; target: issue 10's, " +
      `stated for ${TARGET_CONNECTIONS} connections${settings.connections === TARGET_CONNECTIONS ? "" : ` (this run: ${settings.connections})`}`,
  );
  console.log("");
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    const name = r.storage === backend ? backend : `${backend} (service says ${r.storage})`;
    for (const row of r.routes) {
      const s = row.comparison.service;
      const b = row.comparison.bare.figures;
      rows.push([
        `${name} ${row.route}`,
        String(row.connections),
        s.figures.requestsPerSec.toFixed(0),
        String(s.figures.latencyP50Ms),
        String(s.figures.latencyP99Ms),
        String(s.firstSecond),
        String(s.lastSecond),
        b.requestsPerSec.toFixed(0),
        String(b.latencyP99Ms),
        String(row.comparison.answerBytes),
        percent(row.comparison.ratio),
        s.cpuUsPerRequest === null ? "n/a" : s.cpuUsPerRequest.toFixed(0),
        row.comparison.bare.cpuUsPerRequest === null ? "n/a" : row.comparison.bare.cpuUsPerRequest.toFixed(0),
        row.target,
        row.holds ? "yes" : "no",
      ]);
    }
  }
  printTable(
    [
      "",
      "conns",
      "req/s",
      "p50 ms",
      "p99 ms",
      "1st s",
      "last s",
      "bare req/s",
      "bare p99",
      "bytes",
      "of bare",
      "CPU µs/req",
      "bare CPU µs/req",
      "target",
      "holds",
    ],
    rows,
  );
  console.log("");
  printBusy(results);
  printDurable(results);
  for (const [backend, r] of results) {
    if (r.fdatasync) {
      const f = r.fdatasync;
      console.log(
        `   ${backend} data directory: fdatasync after a ${f.bytesPerWrite / 1024} KiB append p50 ${f.p50Ms} ms, ` +
          `p99 ${f.p99Ms} ms (${f.samples} samples, before the runs)`,
      );
    }
    if (r.rawPg) {
      const p = r.rawPg;
      console.log(
        `   ${backend} raw: BEGIN; INSERT one order row; COMMIT over ${p.connections} connections for ${p.seconds} s: ` +
          `${p.transactionsPerSec} tx/s, p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms (before the service started)`,
      );
    }
    for (const route of r.routes) {
      const p = route.rawPg;
      if (!p) continue;
      console.log(
        `   ${backend} raw, in turn with ${route.route} (${route.connections} connections), after the service and the ` +
          `bare server in each round: ${p.transactionsPerSec} tx/s over ${p.seconds} s, p50 ${p.p50Ms} ms, ` +
          `p99 ${p.p99Ms} ms (the target's figure)`,
      );
    }
    for (const c of r.orderChecks) {
      console.log(
        `   ${backend}, ${c.connections} connections: ${c.restingOrdersPlaced} resting orders placed (warm-up included), ` +
          `${c.positionsAfterResting} positions after; ${c.fillingOrdersPlaced} market orders placed, ` +
          `${c.sharesHeldAfterFilling} shares held after`,
      );
    }
  }
}

const percent = (ratio: number | null) => (ratio === null ? "n/a" : `${(ratio * 100).toFixed(1)}%`);

/** How busy each run kept the server's event loop and the machine: what bounded it. */
function printBusy(results: readonly [BackendName, HttpBackendFigures][]): void {
  const busy = (run: Run | null, of: "loopBusy" | "machineBusy") => (run === null ? "" : percent(run[of]));
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    for (const row of r.routes) {
      const { service, bare, durable } = row.comparison;
      rows.push([
        `${backend} ${row.route}`,
        String(row.connections),
        busy(service, "loopBusy"),
        busy(service, "machineBusy"),
        busy(bare, "loopBusy"),
        busy(bare, "machineBusy"),
        busy(durable, "loopBusy"),
        busy(durable, "machineBusy"),
      ]);
    }
  }
  console.log(
    "   loop busy: the share of the run the server's main thread, its event loop (where each request is read, " +
      "decided and answered), spent on a CPU; machine busy: the share of the machine's CPU time busy in the run " +
      `(${availableParallelism()} cores; the load generator, the server's other threads and, on PostgreSQL, the ` +
      "database included). A loop near 100% bounds its server while the machine still has room",
  );
  console.log("");
  printTable(
    ["", "conns", "loop busy", "machine busy", "bare loop", "bare machine", "durable loop", "durable machine"],
    rows,
  );
  console.log("");
}

/** The order rows beside the durable bare server, where it was measured. */
function printDurable(results: readonly [BackendName, HttpBackendFigures][]): void {
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    for (const row of r.routes) {
      const { service, bare, durable, ofDurable } = row.comparison;
      if (durable === null) continue;
      rows.push([
        `${backend} ${row.route}`,
        String(row.connections),
        service.figures.requestsPerSec.toFixed(0),
        bare.figures.requestsPerSec.toFixed(0),
        durable.figures.requestsPerSec.toFixed(0),
        String(durable.figures.latencyP99Ms),
        percent(rateOver(durable, bare)),
        percent(ofDurable),
        durable.cpuUsPerRequest === null ? "n/a" : durable.cpuUsPerRequest.toFixed(0),
      ]);
    }
  }
  if (rows.length === 0) return;
  console.log(
    "   durable: the bare server again, first storing each request's body as a row (indexed by its strategy) on a " +
      "thread of its own, the rows of a turn of the event loop in one transaction (WAL, synchronous=FULL), " +
      "answering once it is committed: durability with nothing else the service does, measured in turn with the service and the bare server",
  );
  console.log("");
  printTable(
    [
      "",
      "conns",
      "req/s",
      "bare req/s",
      "durable req/s",
      "durable p99",
      "durable of bare",
      "of durable",
      "durable CPU µs/req",
    ],
    rows,
  );
  console.log("");
}
