import type { Kysely, Migration } from "kysely";

/**
 * Daily equity marks: each strategy's model account at every NYSE close,
 * with the S&P 500 proxy's price at the same close. Strategies count the
 * commissions they have paid, so a mark can be restated without them.
 */
export function equityMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("strategies")
        .addColumn("commissions_paid", "text", (c) => c.notNull().defaultTo("0"))
        .execute();
      await db.schema
        .createTable("equity_marks")
        .addColumn("strategy_id", "bigint", (c) => c.notNull().references("strategies.id"))
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("marked_at", "bigint", (c) => c.notNull())
        .addColumn("equity", "text", (c) => c.notNull())
        .addColumn("cash", "text", (c) => c.notNull())
        .addColumn("exposure", "text", (c) => c.notNull())
        .addColumn("commissions_paid", "text", (c) => c.notNull())
        .addColumn("benchmark", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("equity_marks_pk", ["strategy_id", "day"])
        .execute();
    },
  };
}
