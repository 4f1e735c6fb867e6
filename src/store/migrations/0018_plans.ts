import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/**
 * Licence plans: what a person pays the service (or a site) monthly to
 * invest, manage strategies or AutoTrade, service-wide or for one site; the
 * plan subscriptions people hold; and who pays the AutoTrading licence of a
 * white-label site's customers.
 */
export function plansMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(backend, db.schema.createTable("license_plans"))
        .addColumn("site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("license_type", "text", (c) => c.notNull())
        .addColumn("license_type_id", "integer", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("monthly_cost_cents", "bigint", (c) => c.notNull())
        .addColumn("is_recurring", "integer", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("license_plans_site_idx").on("license_plans").columns(["site_id", "kind"]).execute();

      await withId(backend, db.schema.createTable("plan_subscriptions"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("plan_id", "bigint", (c) => c.notNull().references("license_plans.id"))
        .addColumn("started_at", "bigint", (c) => c.notNull())
        .addColumn("ended_at", "bigint")
        .addColumn("is_recurring", "integer", (c) => c.notNull())
        .addColumn("cost_cents", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("plan_subscriptions_person_idx")
        .on("plan_subscriptions")
        .columns(["person_id", "id"])
        .execute();

      await db.schema
        .alterTable("sites")
        .addColumn("autotrade_fee_policy", "text", (c) => c.notNull().defaultTo("CustomerPays"))
        .execute();
    },
  };
}
