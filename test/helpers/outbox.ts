import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { decimal, sub } from "../../src/core/decimal.js";
import { RECORDS_CONSUMER } from "../../src/store/migrations/0014_strategy_records.js";
import type { TestService } from "./service.js";

/**
 * What the API does not show of the outbox, read from storage: a strategy's
 * order events, its model account, where the records consumer stands, and
 * the record totals its fills and trades say.
 */

export interface StoredEvent {
  readonly seq: number;
  readonly kind: string;
  readonly orderId: number | null;
  // biome-ignore lint/suspicious/noExplicitAny: payloads are JSON objects of several shapes
  readonly payload: any;
  readonly actorPersonId: number | null;
  readonly onBehalfOfPersonId: number | null;
}

/** The strategy's model account's order events, in seq order. */
export async function eventsOf(service: TestService, strategyId: number): Promise<StoredEvent[]> {
  const rows = await service.storage.db
    .selectFrom("order_events as e")
    .innerJoin("accounts as a", "a.id", "e.account_id")
    .select(["e.seq", "e.kind", "e.order_id", "e.payload", "e.actor_person_id", "e.on_behalf_of_person_id"])
    .where("a.strategy_id", "=", strategyId)
    .orderBy("e.seq")
    .execute();
  return rows.map((row) => ({
    seq: row.seq,
    kind: row.kind,
    orderId: row.order_id,
    payload: JSON.parse(row.payload),
    actorPersonId: row.actor_person_id,
    onBehalfOfPersonId: row.on_behalf_of_person_id,
  }));
}

/** The strategy's model account as stored. */
export function accountOf(service: TestService, strategyId: number) {
  return service.storage.db
    .selectFrom("accounts")
    .select(["id", "event_seq", "version", "cash", "starting_cash"])
    .where("strategy_id", "=", strategyId)
    .executeTakeFirstOrThrow();
}

/** The strategy's model account's events run 1..event_seq without a gap; answers them and the account. */
export async function assertEventsWithoutGap(service: TestService, strategyId: number) {
  const events = await eventsOf(service, strategyId);
  const account = await accountOf(service, strategyId);
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
    "seq runs 1, 2, 3… without a gap",
  );
  assert.equal(account.event_seq, events.length, "the account's event_seq is its last event's seq");
  return { events, account };
}

/** Accounts whose events the records consumer has not all read: [account, event_seq, position]. */
export async function accountsBehind(service: TestService): Promise<[number, number, number | null][]> {
  const rows = await service.storage.db
    .selectFrom("accounts as a")
    .leftJoin("outbox_positions as p", (join) =>
      join.onRef("p.account_id", "=", "a.id").on("p.consumer", "=", RECORDS_CONSUMER),
    )
    .select(["a.id", "a.event_seq", "p.seq"])
    .orderBy("a.id")
    .execute();
  return rows.filter((row) => row.event_seq !== (row.seq ?? 0)).map((row) => [row.id, row.event_seq, row.seq]);
}

/**
 * Drains the services' frames until the records consumer has read every
 * account's events. A consumer that reads an account from storage (at start,
 * after a gap or a conflict) does so beside the frame, so this asks a bounded
 * number of times rather than once.
 */
export async function consumersCaughtUp(services: readonly TestService[]): Promise<void> {
  const [first] = services;
  assert.ok(first);
  let behind: [number, number, number | null][] = [];
  for (let round = 0; round < 400; round++) {
    for (const service of services) await service.app.runtime.frame.drain();
    behind = await accountsBehind(first);
    if (behind.length === 0) return;
    await sleep(10);
  }
  assert.fail(`the records consumer stays behind: [account, event_seq, position] ${JSON.stringify(behind)}`);
}

export interface RecordTotals {
  readonly fills_stock: number;
  readonly fills_option: number;
  readonly fills_future: number;
  readonly fills_forex: number;
  readonly latest_fill_at: number | null;
  readonly closed_trades: number;
  readonly winners: number;
  readonly losers: number;
  readonly sum_winners_cents: number;
  readonly sum_losers_cents: number;
  readonly duration_ms: number;
}

/** The strategy's row of strategy_records (all zero when it has none). */
export async function storedRecordTotals(service: TestService, strategyId: number): Promise<RecordTotals> {
  const row = await service.storage.db
    .selectFrom("strategy_records")
    .select([
      "fills_stock",
      "fills_option",
      "fills_future",
      "fills_forex",
      "latest_fill_at",
      "closed_trades",
      "winners",
      "losers",
      "sum_winners_cents",
      "sum_losers_cents",
      "duration_ms",
    ])
    .where("strategy_id", "=", strategyId)
    .executeTakeFirst();
  return (
    row ?? {
      fills_stock: 0,
      fills_option: 0,
      fills_future: 0,
      fills_forex: 0,
      latest_fill_at: null,
      closed_trades: 0,
      winners: 0,
      losers: 0,
      sum_winners_cents: 0,
      sum_losers_cents: 0,
      duration_ms: 0,
    }
  );
}

/** The records consumer's stored totals for the strategy are those its stored history says. */
export async function assertRecordTotalsMatchHistory(
  service: TestService,
  strategyId: number,
  message?: string,
): Promise<void> {
  assert.deepEqual(
    await storedRecordTotals(service, strategyId),
    await recordTotalsOfHistory(service, strategyId),
    message,
  );
}

const UNITS_PER_CENT = 1_000_000n;

/** The record totals the strategy's stored fills and closed trades say, counted here afresh. */
export async function recordTotalsOfHistory(service: TestService, strategyId: number): Promise<RecordTotals> {
  const db = service.storage.db;
  const fills = await db
    .selectFrom("fills")
    .select(["symbol_type", "filled_at"])
    .where("strategy_id", "=", strategyId)
    .execute();
  const trades = await db
    .selectFrom("trades")
    .select(["opened_at", "closed_at", "realized", "commission"])
    .where("strategy_id", "=", strategyId)
    .where("closed_at", "is not", null)
    .execute();
  const count = (kind: string) => fills.filter((fill) => fill.symbol_type === kind).length;
  const profits = trades.map((trade) => {
    const units = sub(decimal(trade.realized), decimal(trade.commission));
    assert.equal(
      units % UNITS_PER_CENT,
      0n,
      `a trade's profit is whole cents: ${trade.realized} − ${trade.commission}`,
    );
    return Number(units / UNITS_PER_CENT);
  });
  return {
    fills_stock: count("stock"),
    fills_option: count("option"),
    fills_future: count("future"),
    fills_forex: count("forex"),
    latest_fill_at: fills.length === 0 ? null : Math.max(...fills.map((fill) => fill.filled_at)),
    closed_trades: trades.length,
    winners: profits.filter((p) => p > 0).length,
    losers: profits.filter((p) => p < 0).length,
    sum_winners_cents: profits.filter((p) => p > 0).reduce((sum, p) => sum + p, 0),
    sum_losers_cents: profits.filter((p) => p < 0).reduce((sum, p) => sum + p, 0),
    duration_ms: trades.reduce((sum, trade) => sum + ((trade.closed_at as number) - trade.opened_at), 0),
  };
}
