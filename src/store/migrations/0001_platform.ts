import type { Kysely, Migration } from "kysely";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/** Settings, sites, people, platforms and access keys. */
export function platformMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("service_settings")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();

      await withId(backend, db.schema.createTable("sites"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("domain", "text")
        .addColumn("geo_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();

      await withId(backend, db.schema.createTable("persons"))
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("white_label_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("geo_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("alias", "text")
        .addColumn("phone", "text")
        .addColumn("is_phone_verified", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("language", "text")
        .addColumn("country_code", "text")
        .addColumn("division_code", "text")
        .addColumn("is_email_validated", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("is_alive", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("last_logged_in", "bigint")
        .addColumn("last_ip", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      // Emails are stored lower-cased, so this makes logins unique regardless of case.
      await db.schema.createIndex("persons_email_key").on("persons").column("email").unique().execute();
      await db.schema
        .createIndex("persons_white_label_site_idx")
        .on("persons")
        .columns(["white_label_site_id", "id"])
        .execute();
      await db.schema.createIndex("persons_geo_site_idx").on("persons").columns(["geo_site_id", "id"]).execute();

      await withId(backend, db.schema.createTable("platforms"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("white_label_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();

      await withId(backend, db.schema.createTable("access_keys"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("platform_id", "bigint", (c) => c.references("platforms.id"))
        .addColumn("comment", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint")
        .addColumn("revoked_at", "bigint")
        .execute();
      await db.schema.createIndex("access_keys_hash_key").on("access_keys").column("key_hash").unique().execute();
      await db.schema.createIndex("access_keys_person_idx").on("access_keys").columns(["person_id", "id"]).execute();
    },
  };
}
