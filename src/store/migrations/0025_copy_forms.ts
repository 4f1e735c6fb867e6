import type { Kysely, Migration } from "kysely";

/**
 * How an account order reaches its broker, from the setup's settings when it
 * was made: `virtual_limit` 1 marks a copy of a strategy limit order kept at
 * the service (VirtualLimitOrdersEnabled) until the strategy's order fills,
 * then sent at market; `as_cfd` 1 a stock order sent as a CFD
 * (TradeStocksAsCFD). The simulated broker keeps the form it was sent.
 */
export function copyFormsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("account_orders")
        .addColumn("virtual_limit", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable("account_orders")
        .addColumn("as_cfd", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable("sim_broker_orders")
        .addColumn("as_cfd", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
