/**
 * A route of the service measured beside a bare server in the same run: the
 * bare server (bench/bare.ts, a child process like the service) answers the
 * same method and path with an answer recorded from the service, so the cost
 * of the service's own work shows as the ratio of the two request rates.
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Options, Result } from "autocannon";
import autocannon from "autocannon";
import {
  AUTH,
  type Figures,
  figures,
  freePorts,
  HOST,
  JSON_HEADERS,
  startChild,
  startOptions,
  stopChild,
  waitUntilAnswering,
} from "./support.js";

export interface Route {
  readonly method: "GET" | "POST";
  /** The path both servers route, without a query. */
  readonly path: string;
  /** The i-th request of a run: its path (with any query) and body. */
  readonly request: (i: number) => { readonly path: string; readonly body?: string };
}

export interface Run {
  readonly figures: Figures;
  /** Completed requests in the first and in the last whole second of the run. */
  readonly firstSecond: number;
  readonly lastSecond: number;
  /** Answers that were 200: all of them, or the run fails. */
  readonly ok: number;
  /**
   * The server process's CPU time (all its threads) per completed request,
   * in µs; null when its pid was not given or /proc cannot be read. What
   * else the machine runs moves it much less than req/s.
   */
  readonly cpuUsPerRequest: number | null;
  /**
   * The share of the run's time the server's main thread (its event loop,
   * where every request is parsed, decided and answered) spent on a CPU;
   * null as for cpuUsPerRequest. Near 100% it bounds the server, whatever
   * its other threads and the machine's other cores could still do.
   */
  readonly loopBusy: number | null;
  /** The share of the machine's CPU time (all cores, everything it runs) busy during the run; null without /proc. */
  readonly machineBusy: number | null;
  /** How long the run took, in seconds. */
  readonly seconds: number;
}

export interface Comparison {
  readonly service: Run;
  readonly bare: Run;
  /** The size of the recorded answer the bare server sends. */
  readonly answerBytes: number;
  /** Service requests/s over the bare server's. */
  readonly ratio: number | null;
  /** The bare server again, storing each request durably (CompareOptions.durable); null when not measured. */
  readonly durable: Run | null;
  /** Service requests/s over the durable bare server's. */
  readonly ofDurable: number | null;
  /** Every 200 the service gave: the recorded answer, the warm-up and the run (orders placed, for orders). */
  readonly serviceAnswers: number;
}

export interface RunSettings {
  /** Each server's measured time, split over the rounds (secondsPerRound). */
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /**
   * Rounds in which the service and the bare servers are measured in turn (1 unless given): the
   * machine's speed drifts over tens of seconds, and in turns a drift falls on each of them alike.
   */
  readonly rounds?: number;
}

/** A round's length: whole seconds (autocannon ends a run at a whole second), rounded up. */
export const secondsPerRound = (seconds: number, rounds = 1): number => Math.ceil(seconds / rounds);

export interface CompareOptions {
  /**
   * Measures the bare server a second time storing each request's body
   * durably in a SQLite database in `dir` (bench/bare-store.ts): what the
   * route's durability costs, with nothing else the service does.
   */
  readonly durable?: boolean;
  /**
   * Other work measured in turn with the servers: run after their warm-ups
   * (`warmUp`, for the warm-up's seconds) and after them in each round (for
   * the round's seconds), so the machine's drift falls on it alike.
   */
  readonly alongside?: (seconds: number, warmUp: boolean) => Promise<void>;
  /** How the bare server sends the recorded answer (startBare); "serialize" unless given. */
  readonly send?: "serialize" | "bytes";
  /**
   * Run after each of the service's runs (its warm-up and every round), before
   * the next server is measured: to let it finish what the load generator left
   * in flight when its time was up.
   */
  readonly afterService?: () => Promise<void>;
}

const headersOf = (route: Route) => (route.method === "GET" ? AUTH : JSON_HEADERS);

/** Clock ticks per second of /proc's CPU times. */
let ticksPerSecond: number | undefined;

/**
 * The user and system CPU time so far, in seconds, of a process (`/proc/<pid>/stat`) or of one of its threads
 * (`/proc/<pid>/task/<tid>/stat`; a process's main thread has its pid), or null when /proc cannot tell.
 */
function cpuSeconds(statPath: string | null): number | null {
  if (statPath === null) return null;
  try {
    ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    const stat = readFileSync(statPath, "utf8");
    // After "pid (comm) ": state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** The machine's busy and total CPU time so far over all cores, in clock ticks (/proc/stat), or null. */
function machineTicks(): { readonly busy: number; readonly total: number } | null {
  try {
    const [, ...ticks] = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are the time no core had work.
    const total = ticks.slice(0, 8).reduce((sum, t) => sum + t, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return Number.isFinite(total) && total > 0 ? { busy: total - idle, total } : null;
  } catch {
    return null;
  }
}

const share = (part: number | null, whole: number | null): number | null =>
  part === null || whole === null || whole <= 0 ? null : Number((part / whole).toFixed(3));

/** A run's name (for its errors), the server's port, the route, its seconds and connections, and the server's pid. */
type RunArguments = [name: string, port: number, route: Route, seconds: number, connections: number, pid?: number];

/** One autocannon run of `route` (its CPU time counted when the server's `pid` is given); fails unless every answer was 200. */
export async function measure(...args: RunArguments): Promise<Run> {
  return (await measureRound(...args)).run;
}

/** What autocannon answers a run made with `skipAggregateResult`: its histograms still encoded, to merge with others. */
type RawResult = object;

/**
 * autocannon's merge of runs made with `skipAggregateResult` (its README's
 * `autocannon.aggregateResult`, which @types/autocannon lacks): their latency
 * histograms added, so percentiles are those of every request of the runs.
 * Its request rate is not filled in (0): rates are worked out from totals.
 */
const aggregateResult = (
  autocannon as unknown as { aggregateResult(raws: readonly RawResult[], opts: Options): Result }
).aggregateResult;

/** The options of a run of `route` on `port`, and of merging such runs. */
function runOptions(port: number, route: Route, seconds: number, connections: number): Options {
  return {
    url: `http://${HOST}:${port}${route.path}`,
    method: route.method,
    headers: headersOf(route),
    connections,
    pipelining: 1,
    duration: seconds,
    skipAggregateResult: true,
  };
}

/** measure's run, with autocannon's raw result to merge with the same server's other rounds. */
async function measureRound(...[name, port, route, seconds, connections, pid]: RunArguments): Promise<{
  readonly run: Run;
  readonly raw: RawResult;
}> {
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
  const processStat = pid === undefined ? null : `/proc/${pid}/stat`;
  const loopStat = pid === undefined ? null : `/proc/${pid}/task/${pid}/stat`;
  const cpuBefore = cpuSeconds(processStat);
  const loopBefore = cpuSeconds(loopStat);
  const machineBefore = machineTicks();
  const startedMs = performance.now();
  const options = runOptions(port, route, seconds, connections);
  let raw: RawResult;
  try {
    raw = await autocannon({
      ...options,
      requests: [
        {
          method: route.method,
          setupRequest: (request) => {
            const { path, body } = route.request(next++);
            return { ...request, path, ...(body === undefined ? {} : { body }) };
          },
          onResponse: (status, body) => {
            completed++;
            if (status === 200) ok++;
            else firstRefusal ??= `${status} ${body.slice(0, 500)}`;
          },
        },
      ],
    });
  } finally {
    clearInterval(sampler);
  }
  const result = aggregateResult([raw], options);
  const codes = Object.keys(result.statusCodeStats ?? {});
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || codes.some((code) => code !== "200")) {
    throw new Error(
      `${name}: not every answer was 200: status codes ${JSON.stringify(result.statusCodeStats ?? {})}, ` +
        `${result.errors} errors, ${result.timeouts} timeouts; first refusal: ${firstRefusal ?? "none"}`,
    );
  }
  const wallSeconds = (performance.now() - startedMs) / 1000;
  const cpuAfter = cpuSeconds(processStat);
  const loopAfter = cpuSeconds(loopStat);
  const machineAfter = machineTicks();
  const cpuUsPerRequest =
    cpuBefore === null || cpuAfter === null || completed === 0
      ? null
      : Number((((cpuAfter - cpuBefore) * 1e6) / completed).toFixed(1));
  const run: Run = {
    figures: figuresOf(result),
    firstSecond: perSecond[0] ?? 0,
    lastSecond: perSecond.at(-1) ?? 0,
    ok,
    cpuUsPerRequest,
    loopBusy: share(loopBefore === null || loopAfter === null ? null : loopAfter - loopBefore, wallSeconds),
    machineBusy:
      machineBefore === null || machineAfter === null
        ? null
        : share(machineAfter.busy - machineBefore.busy, machineAfter.total - machineBefore.total),
    seconds: result.duration,
  };
  return { run, raw };
}

/** A merged result's figures, its rate its requests over its time (a merge leaves autocannon's own rate out). */
function figuresOf(result: Result, seconds = result.duration): Figures {
  return { ...figures(result), requestsPerSec: Number((result.requests.total / seconds).toFixed(1)) };
}

/**
 * A server's rounds taken as one run (`merged`: autocannon's merge of their raw results): its
 * requests over their time and its latency percentiles over all of them, the first round's first
 * second and the last round's last, CPU per request over all their requests, and the loop's and
 * the machine's busy shares over all their time.
 */
function combinedRuns(runs: readonly Run[], merged: Result): Run {
  const [first, ...rest] = runs;
  if (first === undefined) throw new Error("no run to combine");
  if (rest.length === 0) return first;
  const sum = (pick: (run: Run) => number) => runs.reduce((total, run) => total + pick(run), 0);
  /** The runs' weighted mean of a figure each may lack (then the mean is null). */
  const mean = (pick: (run: Run) => number | null, weight: (run: Run) => number, digits: number) => {
    if (runs.some((run) => pick(run) === null)) return null;
    return Number((sum((run) => (pick(run) ?? 0) * weight(run)) / sum(weight)).toFixed(digits));
  };
  const seconds = sum((run) => run.seconds);
  return {
    figures: figuresOf(merged, seconds),
    firstSecond: first.firstSecond,
    lastSecond: (runs.at(-1) as Run).lastSecond,
    ok: sum((run) => run.ok),
    cpuUsPerRequest: mean(
      (run) => run.cpuUsPerRequest,
      (run) => run.ok,
      1,
    ),
    loopBusy: mean(
      (run) => run.loopBusy,
      (run) => run.seconds,
      3,
    ),
    machineBusy: mean(
      (run) => run.machineBusy,
      (run) => run.seconds,
      3,
    ),
    seconds,
  };
}

/** The service's answer (JSON text) to the route's first request, which must be 200. */
export async function recordAnswer(name: string, port: number, route: Route): Promise<string> {
  const { path, body } = route.request(0);
  const response = await fetch(`http://${HOST}:${port}${path}`, {
    method: route.method,
    headers: headersOf(route),
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(30_000),
  });
  const answer = await response.text();
  if (response.status !== 200) throw new Error(`${name}: the service answered ${response.status} ${answer}`);
  return answer;
}

/**
 * Starts the bare server answering `route` with `answer` (JSON text), serialized
 * anew per request or sent as the recorded bytes (`durable`: storing each
 * request's body first, in a SQLite file of its own in `dir`), and waits until it
 * answers the route's first request with exactly that text.
 */
export async function startBare(
  name: string,
  route: Route,
  answer: string,
  dir: string,
  send: "serialize" | "bytes" = "serialize",
  durable = false,
): Promise<{ readonly port: number; readonly child: ChildProcess; readonly logPath: string }> {
  const [port = 0] = await freePorts(1);
  const file = `bare-${name.replace(/[^A-Za-z0-9]+/g, "-")}`;
  const answerFile = join(dir, `${file}.json`);
  await writeFile(answerFile, answer);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BARE_HOST: HOST,
    BARE_PORT: String(port),
    BARE_METHOD: route.method,
    BARE_PATH: route.path,
    BARE_ANSWER_FILE: answerFile,
    BARE_SEND: send,
    ...(durable ? { BARE_DURABLE_FILE: join(dir, `${file}.sqlite`) } : {}),
  };
  const logPath = join(dir, `${file}.log`);
  const child = startChild(name, [...startOptions(), "--import", "tsx", "bench/bare.ts"], env, logPath);
  const { path, body } = route.request(0);
  await waitUntilAnswering(
    name,
    child,
    `http://${HOST}:${port}${path}`,
    { method: route.method, headers: headersOf(route), ...(body === undefined ? {} : { body }) },
    (status, text) => status === 200 && text === answer,
  );
  return { port, child, logPath };
}

/** One run's requests/s over another's, or null without the other. */
export const rateOver = (run: Run, other: Run | null): number | null =>
  other !== null && other.figures.requestsPerSec > 0
    ? Number((run.figures.requestsPerSec / other.figures.requestsPerSec).toFixed(3))
    : null;

/**
 * Records the service's answer to the route's first request and starts the
 * bare server with that answer (and, with `options.durable`, the durable bare
 * server); warms up each, then measures them in turn for the settings'
 * rounds (with `options.alongside` after them in each), and stops the bare
 * servers. The bare servers' CPU time per request is counted, and the
 * service's when its pid is given.
 */
export async function compareWithBare(
  name: string,
  servicePort: number,
  route: Route,
  settings: RunSettings,
  dir: string,
  servicePid?: number,
  options: CompareOptions = {},
): Promise<Comparison> {
  const answer = await recordAnswer(name, servicePort, route);
  const { warmupSeconds, connections } = settings;
  const rounds = settings.rounds ?? 1;
  const targets: { readonly name: string; readonly port: number; readonly pid?: number | undefined }[] = [
    { name, port: servicePort, pid: servicePid },
  ];
  const bareServers: ChildProcess[] = [];
  try {
    for (const durable of options.durable ? [false, true] : [false]) {
      const bareName = `${durable ? "durable bare" : "bare"} ${name}`;
      const bare = await startBare(bareName, route, answer, dir, options.send ?? "serialize", durable);
      bareServers.push(bare.child);
      targets.push({ name: bareName, port: bare.port, pid: bare.child.pid });
    }
    const warmups = [];
    for (const target of targets) {
      warmups.push(await measure(`${target.name} warm-up`, target.port, route, warmupSeconds, connections));
      if (target === targets[0]) await options.afterService?.();
    }
    await options.alongside?.(warmupSeconds, true);
    const roundSeconds = secondsPerRound(settings.seconds, rounds);
    const measured = targets.map((target) => ({ target, runs: [] as Run[], raws: [] as RawResult[] }));
    for (let round = 0; round < rounds; round++) {
      for (const { target, runs, raws } of measured) {
        const { run, raw } = await measureRound(target.name, target.port, route, roundSeconds, connections, target.pid);
        runs.push(run);
        raws.push(raw);
        if (target === targets[0]) await options.afterService?.();
      }
      await options.alongside?.(roundSeconds, false);
    }
    const [service, bare, durable] = measured.map(({ target, runs, raws }) =>
      combinedRuns(runs, aggregateResult(raws, runOptions(target.port, route, roundSeconds, connections))),
    ) as [Run, Run, Run | undefined];
    return {
      service,
      bare,
      answerBytes: Buffer.byteLength(answer),
      ratio: rateOver(service, bare),
      durable: durable ?? null,
      ofDurable: rateOver(service, durable ?? null),
      serviceAnswers: 1 + (warmups[0]?.ok ?? 0) + service.ok,
    };
  } finally {
    for (const child of bareServers) await stopChild(child);
  }
}
