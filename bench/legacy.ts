/**
 * `npm run bench:legacy`: the legacy v3 submitSignal beside the v4
 * NewStrategyOrder, in the same run, on the service as `npm start` runs it
 * (logging included), on embedded storage and, with DATABASE_URL, on
 * PostgreSQL in a schema of its own (bench_legacy_<pid>, dropped at the end,
 * also on failure).
 *
 * Per backend, four runs, each after a 1 s warm-up, each request for the next
 * of 100 strategies in turn, with the admin key (which owns the strategies, so
 * it trades them in World context):
 * - resting: a limit buy of 1 AAPL at 1 (rests), v4 first, then v3;
 * - market: a market buy of 1 AAPL (fills inside the request) against a hand
 *   quote without sizes (unlimited), v3 first, then v4.
 * Each run has a fresh set of 100 strategies, so no run pays for the resting
 * orders or positions another left; the order alternates between the pairs,
 * so neither API always runs first on the (growing) orders table. Every v4
 * answer must be 200 with a SignalId, every v3 answer 200 with ok 1 and a
 * signalid (v3 command failures answer 200 with ok 0).
 *
 * Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10). Only
 * 127.0.0.1 (and the DATABASE_URL server) is contacted.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Result } from "autocannon";
import autocannon from "autocannon";
import { toNumber } from "../src/core/decimal.js";
import {
  ADMIN_KEY,
  apiCall,
  createStrategies,
  exited,
  type Figures,
  figures,
  freePorts,
  HOST,
  JSON_HEADERS,
  MARKET_OPEN_ISO,
  positiveIntFromEnv,
  printLogTail,
  printTable,
  progress,
  runBench,
  schemaOfOurOwn,
  sharesHeld,
  simulatedAapl,
  startService,
  stopChild,
  storageBackend,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

type BackendName = "sqlite" | "postgres";
type Api = "v4" | "v3";
type Kind = "resting" | "market";

const V3_HEADERS = { "content-type": "application/json" };
const WARMUP_SECONDS = 1;
const STRATEGIES_PER_RUN = 100;
const V4_PATH = "/Strategies/NewStrategyOrder";
const V3_PATH = "/world/apiv3/submitSignal";
/** The runs in the order they are made: the pairs alternate which API goes first. */
const PLAN: readonly (readonly [Kind, Api])[] = [
  ["resting", "v4"],
  ["resting", "v3"],
  ["market", "v3"],
  ["market", "v4"],
];

interface Settings {
  readonly seconds: number;
  readonly connections: number;
}

interface Run {
  readonly figures: Figures;
  /** Completed requests in the first and in the last whole second of the run. */
  readonly firstSecond: number;
  readonly lastSecond: number;
  /** Accepted orders, warm-up included, and what the run's strategies hold after it. */
  readonly placed: number;
  readonly sharesHeld: number;
}

type Runs = Record<Kind, Record<Api, Run>>;

interface BackendFigures {
  readonly storage: string;
  readonly runs: Runs;
}

/** The request body of one order, for each API and kind. */
function orderBody(api: Api, kind: Kind, strategyId: number): string {
  if (api === "v4") {
    return JSON.stringify({
      Order: {
        StrategyId: strategyId,
        OrderType: kind === "resting" ? "2" : "1",
        Side: "1",
        TIF: "1",
        OrderQuantity: 1,
        ...(kind === "resting" ? { Limit: 1 } : {}),
        ServiceSymbol: { FullSymbol: "AAPL" },
      },
    });
  }
  return JSON.stringify({
    apikey: ADMIN_KEY,
    systemid: strategyId,
    signal: {
      action: "BTO",
      quant: 1,
      symbol: "AAPL",
      typeofsymbol: "stock",
      ...(kind === "resting" ? { limit: 1 } : { market: 1 }),
      duration: "GTC",
    },
  });
}

/** Whether an answer (status 200 already checked) accepted the order. */
function accepted(api: Api, body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { ok?: unknown; signalid?: unknown; Results?: { SignalId?: unknown }[] };
    return api === "v4"
      ? typeof parsed.Results?.[0]?.SignalId === "number"
      : parsed.ok === 1 && typeof parsed.signalid === "string" && parsed.signalid !== "";
  } catch {
    return false;
  }
}

/**
 * One API under autocannon, each request for the next strategy in turn. Fails
 * unless every answer was 200 and accepted the order. Answers the figures, the
 * requests per second and the count of accepted orders.
 */
async function cannon(
  name: string,
  api: Api,
  kind: Kind,
  port: number,
  seconds: number,
  connections: number,
  strategyIds: readonly number[],
): Promise<{ result: Result; perSecond: number[]; ok: number }> {
  const path = api === "v4" ? V4_PATH : V3_PATH;
  let next = 0;
  let completed = 0;
  let ok = 0;
  let firstRefusal: string | undefined;
  const perSecond: number[] = [];
  let counted = 0;
  const sampler = setInterval(() => {
    perSecond.push(completed - counted);
    counted = completed;
  }, 1_000);
  let result: Result;
  try {
    result = await autocannon({
      url: `http://${HOST}:${port}${path}`,
      method: "POST",
      headers: api === "v4" ? JSON_HEADERS : V3_HEADERS,
      connections,
      pipelining: 1,
      duration: seconds,
      requests: [
        {
          method: "POST",
          path,
          setupRequest: (request) => ({
            ...request,
            body: orderBody(api, kind, strategyIds[next++ % strategyIds.length] as number),
          }),
          onResponse: (status, body) => {
            completed++;
            if (status === 200 && accepted(api, body)) ok++;
            else firstRefusal ??= `${status} ${body.slice(0, 500)}`;
          },
        },
      ],
    });
  } finally {
    clearInterval(sampler);
  }
  const codes = Object.keys(result.statusCodeStats ?? {});
  const refused = completed - ok;
  if (
    refused > 0 ||
    result.non2xx > 0 ||
    result.errors > 0 ||
    result.timeouts > 0 ||
    codes.some((code) => code !== "200")
  ) {
    throw new Error(
      `${name}: ${refused} of ${completed} answers did not accept the order: status codes ` +
        `${JSON.stringify(result.statusCodeStats ?? {})}, ${result.errors} errors, ${result.timeouts} timeouts; ` +
        `first refusal: ${firstRefusal ?? "none"}`,
    );
  }
  return { result, perSecond, ok };
}

async function backendBench(
  backend: BackendName,
  settings: Settings,
  pgUrl: string | undefined,
): Promise<BackendFigures> {
  const dir = await tempDir(`strategy-hub-bench-legacy-${backend}-`);
  const logPath = join(dir, "service.log");
  const schema = `bench_legacy_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, true) : null;
  let service: ChildProcess | undefined;
  try {
    const ports = await freePorts(4);
    const gen = ports[1] ?? 0;
    const legacy = ports[3] ?? 0;
    service = startService(ports, join(dir, "data"), ADMIN_KEY, logPath, {
      SANDBOX: "1",
      MARKET_FEED: "simulated",
      // The service's pool takes its search_path from PGOPTIONS.
      ...(backend === "postgres" ? { DATABASE_URL: pgUrl as string, PGOPTIONS: `-c search_path=${schema}` } : {}),
    });
    const child = service;
    progress(`${backend}: waiting for the service (GEN :${gen}, LEGACY :${legacy})`);
    await waitUntilAnswering(
      "service",
      child,
      `http://${HOST}:${gen}/General/Hello`,
      { method: "POST", headers: JSON_HEADERS, body: "{}" },
      (status) => status === 200,
    );
    await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: MARKET_OPEN_ISO });
    progress(`${backend}: creating ${PLAN.length} x ${STRATEGIES_PER_RUN} strategies`);
    const strategiesOf = new Map<string, number[]>();
    for (const [kind, api] of PLAN) {
      const ids = await createStrategies(gen, STRATEGIES_PER_RUN, `Bench ${kind} ${api}`);
      strategiesOf.set(`${kind} ${api}`, ids);
    }
    // The legacy server answers and the admin key reaches a strategy in World context.
    const probe = strategiesOf.get("resting v3")?.[0];
    await waitUntilAnswering(
      "legacy server",
      child,
      `http://${HOST}:${legacy}/world/apiv3/requestMarginEquity`,
      { method: "POST", headers: V3_HEADERS, body: JSON.stringify({ apikey: ADMIN_KEY, systemid: probe }) },
      (status, text) => status === 200 && (JSON.parse(text) as { ok?: unknown }).ok === 1,
    );

    const done = new Map<string, Run>();
    let quoteSet = false;
    for (const [kind, api] of PLAN) {
      if (kind === "market" && !quoteSet) {
        // Without sizes (unlimited): the simulated quote's size would run out with the clock standing still.
        const aapl = simulatedAapl();
        await apiCall(gen, "POST", "/Sandbox/SetQuote", {
          Symbol: "AAPL",
          Bid: toNumber(aapl.bid),
          Ask: toNumber(aapl.ask),
          Last: toNumber(aapl.last),
        });
        quoteSet = true;
      }
      const ids = strategiesOf.get(`${kind} ${api}`) as number[];
      const port = api === "v4" ? gen : legacy;
      const label = `${backend} ${api} ${kind}`;
      progress(`${label}: warm-up ${WARMUP_SECONDS} s`);
      const warm = await cannon(`${label} warm-up`, api, kind, port, WARMUP_SECONDS, settings.connections, ids);
      progress(`${label}: ${settings.seconds} s, ${settings.connections} connections`);
      const measured = await cannon(label, api, kind, port, settings.seconds, settings.connections, ids);
      if (exited(child)) throw new Error(`the service exited during the ${label} run`);
      const placed = warm.ok + measured.ok;
      const held = await sharesHeld(gen, ids);
      if (kind === "resting" && held !== 0) throw new Error(`${label}: resting limit orders filled: ${held} shares`);
      // Requests cut off at the end of a run may still be served, so the strategies can hold a few more.
      if (kind === "market" && held < placed) {
        throw new Error(`${label}: market orders did not fill in the request: ${placed} placed, ${held} held`);
      }
      done.set(`${kind} ${api}`, {
        figures: figures(measured.result),
        firstSecond: measured.perSecond[0] ?? 0,
        lastSecond: measured.perSecond.at(-1) ?? 0,
        placed,
        sharesHeld: held,
      });
    }
    const runOf = (kind: Kind, api: Api) => done.get(`${kind} ${api}`) as Run;
    const runs: Runs = {
      resting: { v4: runOf("resting", "v4"), v3: runOf("resting", "v3") },
      market: { v4: runOf("market", "v4"), v3: runOf("market", "v3") },
    };
    return { storage: await storageBackend(logPath), runs };
  } catch (error) {
    await printLogTail(`${backend} service`, logPath);
    throw error;
  } finally {
    if (service) await stopChild(service);
    await dropSchema?.();
  }
}

const ratio = (v3: number, v4: number): number => (v4 === 0 ? Number.NaN : Number((v3 / v4).toFixed(2)));

function ratios(pair: Record<Api, Run>) {
  const [v3, v4] = [pair.v3.figures, pair.v4.figures];
  return {
    requestsPerSec: ratio(v3.requestsPerSec, v4.requestsPerSec),
    latencyP50: ratio(v3.latencyP50Ms, v4.latencyP50Ms),
    latencyP99: ratio(v3.latencyP99Ms, v4.latencyP99Ms),
  };
}

function print(settings: Settings, results: readonly [BackendName, BackendFigures][]): void {
  const aapl = simulatedAapl();
  console.log(
    `v4 POST ${V4_PATH} (GEN) beside v3 POST ${V3_PATH} (LEGACY), ${settings.seconds} s per run after ` +
      `${WARMUP_SECONDS} s of warm-up, ${settings.connections} connections, pipelining 1; service at the default ` +
      `LOG_LEVEL (info), SANDBOX=1, MARKET_FEED=simulated, clock at ${MARKET_OPEN_ISO}; admin key, World context`,
  );
  console.log(
    "   resting: limit buy 1 AAPL at 1 GTC (rests); market: market buy 1 AAPL GTC (fills in the request) against a " +
      `hand quote ${toNumber(aapl.bid)} x ${toNumber(aapl.ask)} without sizes (SetQuote, before the market runs)`,
  );
  console.log(
    `   each run on a fresh set of ${STRATEGIES_PER_RUN} strategies, requests rotating over them; run order: ` +
      `${PLAN.map(([kind, api]) => `${api} ${kind}`).join(", ")}; every answer was 200 and accepted the order ` +
      "(v4 SignalId, v3 ok 1 with a signalid)",
  );
  console.log("   1st s / last s: requests completed in the first and the last second of the run");
  console.log("");
  const rows: string[][] = [];
  for (const [backend, r] of results) {
    const name = r.storage === backend ? backend : `${backend} (service says ${r.storage})`;
    for (const [kind, api] of PLAN) {
      const run = r.runs[kind][api];
      const f = run.figures;
      rows.push([
        `${name} ${kind} ${api}`,
        f.requestsPerSec.toFixed(0),
        String(f.latencyP50Ms),
        String(f.latencyP99Ms),
        f.latencyAvgMs.toFixed(2),
        String(f.totalRequests),
        String(run.firstSecond),
        String(run.lastSecond),
        String(run.placed),
        String(run.sharesHeld),
      ]);
    }
  }
  printTable(["", "req/s avg", "p50 ms", "p99 ms", "avg ms", "requests", "1st s", "last s", "placed", "held"], rows);
  console.log("");
  const ratioRows: string[][] = [];
  for (const [backend, r] of results) {
    for (const kind of ["resting", "market"] as const) {
      const q = ratios(r.runs[kind]);
      ratioRows.push([
        `${backend} ${kind}`,
        q.requestsPerSec.toFixed(2),
        q.latencyP50.toFixed(2),
        q.latencyP99.toFixed(2),
      ]);
    }
  }
  printTable(["v3 / v4", "req/s", "p50", "p99"], ratioRows);
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 10),
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
  };
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const results: [BackendName, BackendFigures][] = [];
  for (const backend of backends) results.push([backend, await backendBench(backend, settings, pgUrl)]);

  print(settings, results);
  console.log(
    `RESULT ${JSON.stringify({
      ...settings,
      warmupSeconds: WARMUP_SECONDS,
      pipelining: 1,
      logLevel: "info",
      strategiesPerRun: STRATEGIES_PER_RUN,
      runOrder: PLAN.map(([kind, api]) => `${api} ${kind}`),
      backends: Object.fromEntries(
        results.map(([backend, r]) => [
          backend,
          {
            storage: r.storage,
            runs: r.runs,
            v3OverV4: { resting: ratios(r.runs.resting), market: ratios(r.runs.market) },
          },
        ]),
      ),
    })}`,
  );
}

await runBench(main);
