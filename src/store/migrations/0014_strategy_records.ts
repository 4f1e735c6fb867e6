import { type Kysely, type Migration, sql } from "kysely";

/**
 * Each strategy's record totals, kept by the records consumer of the outbox
 * (src/engine/outbox/records.ts) from its fills: fills by kind of instrument,
 * the latest fill, and its closed trades' count, winners, losers, sums and
 * durations (profits in cents, so sums add exactly in SQL). Strategies that
 * traded before are counted from their fills and trades, and the consumer
 * starts after their last event.
 */
export const RECORDS_CONSUMER = "records";

export function strategyRecordsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("strategy_records")
        .addColumn("strategy_id", "bigint", (c) => c.primaryKey().references("strategies.id"))
        .addColumn("fills_stock", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("fills_option", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("fills_future", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("fills_forex", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("latest_fill_at", "bigint")
        .addColumn("closed_trades", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("winners", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("losers", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("sum_winners_cents", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("sum_losers_cents", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("duration_ms", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
      const fills = await sql<{ strategy_id: number; symbol_type: string; fills: number; latest: number }>`
        select strategy_id, symbol_type, count(*) as fills, max(filled_at) as latest from fills
        group by strategy_id, symbol_type`.execute(db);
      const trades = await sql<{
        strategy_id: number;
        opened_at: number;
        closed_at: number;
        realized: string;
        commission: string;
      }>`
        select strategy_id, opened_at, closed_at, realized, commission from trades where closed_at is not null`.execute(
        db,
      );
      type Totals = Record<string, number | null>;
      const totals = new Map<number, Totals>();
      const of = (id: number): Totals => {
        let found = totals.get(id);
        if (!found) {
          found = {
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
          };
          totals.set(id, found);
        }
        return found;
      };
      for (const row of fills.rows) {
        const t = of(Number(row.strategy_id));
        t[`fills_${row.symbol_type}`] = Number(t[`fills_${row.symbol_type}`] ?? 0) + Number(row.fills);
        t.latest_fill_at = Math.max(Number(t.latest_fill_at ?? 0), Number(row.latest));
      }
      for (const row of trades.rows) {
        const t = of(Number(row.strategy_id));
        const cents = toCents(row.realized) - toCents(row.commission);
        t.closed_trades = Number(t.closed_trades) + 1;
        if (cents > 0) {
          t.winners = Number(t.winners) + 1;
          t.sum_winners_cents = Number(t.sum_winners_cents) + cents;
        } else if (cents < 0) {
          t.losers = Number(t.losers) + 1;
          t.sum_losers_cents = Number(t.sum_losers_cents) + cents;
        }
        t.duration_ms = Number(t.duration_ms) + (Number(row.closed_at) - Number(row.opened_at));
      }
      for (const [strategyId, t] of totals) {
        await db
          .insertInto("strategy_records" as never)
          .values({ strategy_id: strategyId, ...t } as never)
          .execute();
      }
      await sql`insert into outbox_positions (consumer, account_id, seq)
        select ${RECORDS_CONSUMER}, id, event_seq from accounts`.execute(db);
    },
  };
}

/** Dollars to the cent as text ("-12.5") in whole cents. */
function toCents(text: string): number {
  const [whole = "0", fraction = ""] = text.replace("-", "").split(".");
  const cents = Number(whole) * 100 + Number(`${fraction}00`.slice(0, 2));
  return text.startsWith("-") ? -cents : cents;
}
