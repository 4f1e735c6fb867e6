import type { Kysely, Migration } from "kysely";

/**
 * Rule 575 (issue 14): each white-label site's tolerance for its customers'
 * autotrade fills (basis points worse than the strategy's average fill, as
 * exact decimal text) and the window after the strategy's last fill they may
 * execute in; null keeps the service's defaults (docs/decisions.md). The
 * report reads a site's copy fills by account and time, by the index 0026
 * made for the instrumentation export's executions.
 */
export function rule575Migration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sites").addColumn("rule575_tolerance_bps", "text").execute();
      await db.schema.alterTable("sites").addColumn("rule575_window_seconds", "integer").execute();
    },
  };
}
