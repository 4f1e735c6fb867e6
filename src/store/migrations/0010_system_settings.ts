import type { Kysely, Migration } from "kysely";

/**
 * The settings the legacy API keeps on a strategy (a "system"): free trial
 * days, the minimum portfolio size, signal-entry credits, the test flag, and
 * when it stopped being alive.
 */
export function systemSettingsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const [column, type] of [
        ["trial_days", "integer"],
        ["minimum_portfolio", "text"],
        ["credit_system_until", "bigint"],
        ["free_signal_credits", "bigint"],
        ["is_test", "integer"],
        ["inactive_since", "bigint"],
      ] as const) {
        await db.schema.alterTable("strategies").addColumn(column, type).execute();
      }
    },
  };
}
