import { Counter, Gauge, Histogram, type Metric, Registry } from "prom-client";
import type { FillLoopStatus } from "./engine/fill-loop.js";
import type { TradingFrame } from "./engine/frame/frame.js";
import { DURATION_BUCKETS, RequestTally } from "./http/request-tally.js";
import type { Storage } from "./store/storage.js";

/** Upper bounds of the commit latency histogram, in seconds: a durable commit takes from tens of microseconds up. */
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export interface MetricSources {
  readonly storage: Storage;
  readonly frame: TradingFrame;
  readonly fillLoop: () => FillLoopStatus;
  /** The outbox's consumers, by name: their lag is read from storage when scraped. */
  readonly consumers: readonly string[];
  /** The machine's time in milliseconds. */
  readonly systemNow: () => number;
}

/**
 * The service's Prometheus metrics (`GET /metrics`), one registry per
 * process. What changes on every request or quote is counted in plain
 * numbers where it happens and read when scraped; the frame's batches and
 * events are heard through its listener. Nothing here is read by the domain.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** The v4 servers count their requests here. */
  readonly requests = new RequestTally();

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    this.registry.registerMetric(requestCounter(this.requests));
    this.registry.registerMetric(requestDurations(this.requests));

    const commits = new Histogram({
      name: "storage_commit_duration_seconds",
      help: "Time storage took to answer a commit of the trading frame's batch.",
      buckets: COMMIT_BUCKETS,
      registers,
    });
    const placed = new Counter({
      name: "orders_placed_total",
      help: "Orders placed (accepted, held or working) and committed by this process.",
      registers,
    });
    const fills = new Counter({ name: "fills_total", help: "Fills committed by this process.", registers });
    sources.frame.listen({
      commitTimed: (ms) => commits.observe(ms / 1000),
      committed: (events) => {
        for (const event of events) {
          if (event.kind === "accepted") placed.inc();
          else if (event.kind === "fill") fills.inc();
        }
      },
    });

    new Counter({
      name: "fill_loop_quotes_processed_total",
      help: "New quotes of open markets the fill loop worked.",
      registers,
      collect() {
        this.reset();
        this.inc(sources.fillLoop().quotesWorked);
      },
    });
    new Gauge({
      name: "fill_loop_lag_seconds",
      help: "Machine time since the fill loop last caught up with the clock (releases, expiries, quotes).",
      registers,
      collect() {
        const { caughtUpAtMs } = sources.fillLoop();
        if (caughtUpAtMs === null) this.reset();
        else this.set((sources.systemNow() - caughtUpAtMs) / 1000);
      },
    });
    new Gauge({
      name: "outbox_lag_events",
      help: "Order events committed and not yet consumed, per outbox consumer (one query per consumer when scraped).",
      labelNames: ["consumer"],
      registers,
      async collect() {
        this.reset();
        for (const consumer of sources.consumers) {
          const lag = await outboxLag(sources.storage, consumer);
          if (lag !== null) this.set({ consumer }, lag);
        }
      },
    });
  }

  /** The text exposition format. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** Events past each consumer's position, over every account; null when storage does not answer. */
async function outboxLag(storage: Storage, consumer: string): Promise<number | null> {
  try {
    const row = await storage.db
      .selectFrom("accounts as a")
      .leftJoin("outbox_positions as p", (join) =>
        join.onRef("p.account_id", "=", "a.id").on("p.consumer", "=", consumer),
      )
      .select((eb) =>
        eb.fn.sum<number | string | null>(eb("a.event_seq", "-", eb.fn.coalesce("p.seq", eb.lit(0)))).as("lag"),
      )
      .executeTakeFirst();
    return Number(row?.lag ?? 0);
  } catch {
    return null;
  }
}

const REQUEST_LABELS = (series: { server: string; operation: string; status: string }) => ({
  server: series.server,
  operation: series.operation,
  status: series.status,
});

/**
 * prom-client's registry takes any metric that answers `get()` in its shape;
 * these two read the tally's plain numbers, so a request never pays for a
 * metric's label hashing.
 */
function requestCounter(tally: RequestTally): Metric {
  const metric = {
    name: "http_requests_total",
    help: "v4 requests answered, by server, operation (unknown: no route) and HTTP status.",
    type: "counter",
    aggregator: "sum",
    get: async () => ({
      ...metric,
      values: tally.series.map((series) => ({ labels: REQUEST_LABELS(series), value: series.count })),
    }),
  };
  return metric as unknown as Metric;
}

function requestDurations(tally: RequestTally): Metric {
  const name = "http_request_duration_seconds";
  const metric = {
    name,
    help: "Time to answer v4 requests, by server, operation (unknown: no route) and HTTP status.",
    type: "histogram",
    aggregator: "sum",
    get: async () => ({
      ...metric,
      values: tally.series.flatMap((series) => {
        const labels = REQUEST_LABELS(series);
        let cumulative = 0;
        const buckets = DURATION_BUCKETS.map((bound, i) => {
          cumulative += series.buckets[i] ?? 0;
          return { metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative };
        });
        return [
          ...buckets,
          { metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: series.count },
          { metricName: `${name}_sum`, labels, value: series.sum },
          { metricName: `${name}_count`, labels, value: series.count },
        ];
      }),
    }),
  };
  return metric as unknown as Metric;
}
