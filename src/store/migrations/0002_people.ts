import { randomBytes } from "node:crypto";
import { type Kysely, type Migration, sql } from "kysely";
import { fold } from "../../core/search.js";
import type { Backend } from "../storage.js";
import { withId } from "./helpers.js";

/** Profiles, sign-up credentials, site support contacts, KYC records and key sessions. */
export function peopleMigration(backend: Backend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const [column, type] of [
        ["alias_key", "text"],
        ["first_name_folded", "text"],
        ["last_name_folded", "text"],
        ["password_hash", "text"],
        ["street", "text"],
        ["street2", "text"],
        ["city", "text"],
        ["zip_code", "text"],
        ["company", "text"],
        ["signup_ip", "text"],
        ["user_token", "text"],
        ["csrf_hash", "text"],
      ] as const) {
        await db.schema.alterTable("persons").addColumn(column, type).execute();
      }
      // People created before this migration (operators made with the CLI) get folded names and a
      // UserToken. Folded here rather than with SQL lower(), which on SQLite folds ASCII only.
      const existing = await sql<{ id: number; first_name: string; last_name: string }>`
        select id, first_name, last_name from persons`.execute(db);
      for (const person of existing.rows) {
        await sql`update persons set first_name_folded = ${fold(person.first_name)},
          last_name_folded = ${fold(person.last_name)},
          user_token = ${randomBytes(24).toString("base64url")} where id = ${person.id}`.execute(db);
      }
      // Screen names are unique regardless of case; the folded copy carries the index.
      await db.schema.createIndex("persons_alias_key").on("persons").column("alias_key").unique().execute();
      await db.schema.createIndex("persons_user_token_key").on("persons").column("user_token").unique().execute();
      await db.schema.createIndex("persons_phone_idx").on("persons").columns(["phone", "is_phone_verified"]).execute();

      for (const column of ["support_company_name", "support_site_url", "support_email"]) {
        await db.schema.alterTable("sites").addColumn(column, "text").execute();
      }

      await withId(backend, db.schema.createTable("kyc_scores"))
        .addColumn("person_id", "bigint", (c) => c.notNull().unique().references("persons.id"))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("started_at", "bigint")
        .addColumn("approved_at", "bigint")
        .addColumn("finished_at", "bigint")
        .addColumn("redirected_times", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("score", "integer")
        .execute();

      await withId(backend, db.schema.createTable("kyc_infos"))
        .addColumn("person_id", "bigint", (c) => c.notNull().unique().references("persons.id"))
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("phone", "text", (c) => c.notNull())
        .addColumn("is_phone_verified", "integer", (c) => c.notNull())
        .addColumn("street", "text", (c) => c.notNull())
        .addColumn("city", "text", (c) => c.notNull())
        .addColumn("province", "text", (c) => c.notNull())
        .addColumn("post_code", "text", (c) => c.notNull())
        .addColumn("country", "text", (c) => c.notNull())
        .addColumn("photo_id1", "text")
        .addColumn("photo_id1_title", "text")
        .addColumn("photo_id2", "text")
        .addColumn("photo_id2_title", "text")
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();

      await withId(backend, db.schema.createTable("key_sessions"))
        .addColumn("key_id", "bigint", (c) => c.notNull().references("access_keys.id"))
        .addColumn("person_id", "bigint", (c) => c.notNull().references("persons.id"))
        .addColumn("white_label_site_id", "bigint", (c) => c.references("sites.id"))
        .addColumn("server", "text", (c) => c.notNull())
        .addColumn("ip_address", "text", (c) => c.notNull())
        .addColumn("started_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("key_sessions_site_idx")
        .on("key_sessions")
        .columns(["white_label_site_id", "started_at", "id"])
        .execute();
    },
  };
}
