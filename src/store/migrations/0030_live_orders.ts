import { type Kysely, type Migration, sql } from "kysely";

/**
 * The indexes every order write pays for, cut to what is read (issue 10).
 * Each index led by a strategy or an account puts a leaf page of its own per
 * account into a batch's commit (SQLite's WAL, PostgreSQL's), and a batch
 * holds orders of many accounts. Live orders are read two ways: all of them
 * when a process starts, and an account's when it is loaded. One partial
 * index of the live orders by account serves both, and an order that ends
 * (or fills in its request, as a market order does) leaves it, so
 * `(status, strategy_id)` and `(account_id, status)`, which held every order
 * ever placed, go. No read finds fills by account (a model account's are
 * read by strategy), so that index goes too.
 *
 * The statuses are written out: the readers' predicate must be this one, word
 * for word, for SQLite and PostgreSQL to use the index (a test holds it to
 * the live statuses of src/core/orders/status.ts).
 */
export const LIVE_ORDERS_INDEX_STATUSES = [
  "PendingNew",
  "Working",
  "PartiallyFilled",
  "PendingCancel",
  "PendingReplace",
] as const;

export function liveOrdersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const statuses = sql.join(LIVE_ORDERS_INDEX_STATUSES.map((status) => sql.lit(status)));
      await sql`create index orders_live_idx on orders (account_id) where status in (${statuses})`.execute(db);
      await db.schema.dropIndex("orders_status_idx").execute();
      await db.schema.dropIndex("orders_account_status_idx").execute();
      await db.schema.dropIndex("fills_account_idx").execute();
    },
  };
}
