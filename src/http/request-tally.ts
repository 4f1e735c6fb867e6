import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from "fastify";

/** Upper bounds of the request duration histogram, in seconds: answers take from tens of microseconds to seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The requests of one operation on one server answered with one status. */
export interface RequestSeries {
  readonly server: string;
  readonly operation: string;
  readonly status: string;
  count: number;
  /** Seconds, summed. */
  sum: number;
  /** Requests per bucket of DURATION_BUCKETS (not cumulative); the last counts those above every bound. */
  readonly buckets: Float64Array;
}

/**
 * Requests counted as they are answered, in plain numbers: a request costs a
 * map lookup and a few additions, not a metrics library's label hashing; the
 * metrics read the series when scraped.
 */
export class RequestTally {
  readonly series: RequestSeries[] = [];

  /** What records the answers of one operation on one server. */
  recorder(server: string, operation: string): (status: number, seconds: number) => void {
    const byStatus = new Map<number, RequestSeries>();
    return (status, seconds) => {
      let series = byStatus.get(status);
      if (!series) {
        series = {
          server,
          operation,
          status: String(status),
          count: 0,
          sum: 0,
          buckets: new Float64Array(DURATION_BUCKETS.length + 1),
        };
        byStatus.set(status, series);
        this.series.push(series);
      }
      series.count += 1;
      series.sum += seconds;
      let bucket = 0;
      while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket += 1;
      series.buckets[bucket] = (series.buckets[bucket] ?? 0) + 1;
    };
  }
}

/**
 * Counts a server's requests in the tally by operation and status: each route
 * registered after this gets a hook of its own labelled with its operation
 * (`operationOf` its path; null leaves the route uncounted), and requests no
 * route matched count as `unknown`. Labels are never the raw URL.
 */
export function tallyRequests(
  app: FastifyInstance,
  server: string,
  tally: RequestTally,
  operationOf: (path: string) => string | null,
): void {
  app.addHook("onRoute", (route) => {
    const operation = operationOf(route.url ?? route.path);
    if (operation === null) return;
    const hook = answered(tally.recorder(server, operation));
    const hooks = route.onResponse;
    route.onResponse = hooks === undefined ? [hook] : [...(Array.isArray(hooks) ? hooks : [hooks]), hook];
  });
  const unknown = answered(tally.recorder(server, "unknown"));
  app.addHook("onResponse", function (this: FastifyInstance, request, reply, done) {
    if (request.is404) return unknown.call(this, request, reply, done);
    done();
  });
}

function answered(record: (status: number, seconds: number) => void): onResponseHookHandler {
  return (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    record(reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
}
