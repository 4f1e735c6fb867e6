/**
 * The floor PostgreSQL sets for an order path that commits each order on its
 * own: clients each looping BEGIN; INSERT one order-shaped row (a prepared
 * statement); COMMIT, for a fixed time, in a table of their own in the
 * benchmark's schema: once before the service starts, and in rounds taken in
 * turn with the service's order runs (the machine's speed drifts over a run).
 * The service's NewStrategyOrder rate on PostgreSQL is printed beside it: one
 * durable commit per order cannot beat it, batching several orders into a
 * commit can.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { percentile, withPg } from "./support.js";

export interface RawPgFigures {
  readonly connections: number;
  readonly seconds: number;
  readonly transactions: number;
  readonly transactionsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const TABLE = "raw_orders";
/** The columns an order row of the service has that a client's order fills in. */
const INSERT = {
  name: "raw_order",
  text:
    `insert into ${TABLE} (strategy_id, symbol, symbol_type, order_type, side, open_close, tif, quantity, ` +
    "limit_price, signal_type, status, posted_at, updated_at) " +
    "values ($1, 'AAPL', 'stock', 'limit', 'buy', 'open', 'gtc', '1', '1', 1, 'Working', $2, $2) returning id",
};

async function createTable(url: string, schema: string): Promise<void> {
  await withPg(url, (client) =>
    client.query(
      `create table if not exists ${schema}.${TABLE} (id bigserial primary key, strategy_id bigint not null, ` +
        "symbol text not null, symbol_type text not null, order_type text not null, side text not null, " +
        "open_close text not null, tif text not null, quantity text not null, limit_price text, " +
        "signal_type integer not null, status text not null, posted_at bigint not null, updated_at bigint not null)",
    ),
  );
}

/** A timed stretch of the clients' transactions: how long it lasted and each transaction's duration (ms). */
export interface RawPgRound {
  readonly seconds: number;
  readonly durations: readonly number[];
}

/** Clients connected and ready, each committing one order per transaction in rounds of a fixed time. */
export interface RawPg {
  readonly connections: number;
  round(seconds: number): Promise<RawPgRound>;
  close(): Promise<void>;
}

/** `connections` clients on a table of their own in `schema` (made unless it is there). */
export async function openRawPg(url: string, schema: string, connections: number): Promise<RawPg> {
  await createTable(url, schema);
  const clients = Array.from(
    { length: connections },
    () => new pg.Client({ connectionString: url, options: `-c search_path=${schema}` }),
  );
  const close = () => Promise.all(clients.map((client) => client.end().catch(() => undefined))).then(() => undefined);
  try {
    await Promise.all(clients.map((client) => client.connect()));
  } catch (error) {
    await close();
    throw error;
  }
  const loop = async (client: pg.Client, strategyId: number, until: number, durations: number[]) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      await client.query("begin");
      await client.query({ ...INSERT, values: [strategyId, Date.now()] });
      await client.query("commit");
      durations.push(performance.now() - t0);
    }
  };
  return {
    connections,
    async round(seconds) {
      const durations: number[] = [];
      const started = performance.now();
      await Promise.all(clients.map((client, i) => loop(client, i + 1, started + seconds * 1000, durations)));
      return { seconds: (performance.now() - started) / 1000, durations };
    },
    close,
  };
}

/** Rounds taken as one run: their transactions over their time, percentiles over all of them. */
export function rawPgFigures(connections: number, rounds: readonly RawPgRound[]): RawPgFigures {
  const durations = rounds.flatMap((round) => round.durations).sort((a, b) => a - b);
  const seconds = rounds.reduce((sum, round) => sum + round.seconds, 0);
  return {
    connections,
    seconds: Math.round(seconds),
    transactions: durations.length,
    transactionsPerSec: seconds > 0 ? Math.round(durations.length / seconds) : 0,
    p50Ms: Number(percentile(durations, 50).toFixed(2)),
    p99Ms: Number(percentile(durations, 99).toFixed(2)),
  };
}

/** `connections` clients, each committing one order per transaction for `seconds` (after a warm-up). */
export async function rawPgBaseline(
  url: string,
  schema: string,
  connections: number,
  seconds: number,
  warmupSeconds: number,
): Promise<RawPgFigures> {
  const raw = await openRawPg(url, schema, connections);
  try {
    await raw.round(warmupSeconds);
    return rawPgFigures(connections, [await raw.round(seconds)]);
  } finally {
    await raw.close();
  }
}
