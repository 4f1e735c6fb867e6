import { type Expression, type RawBuilder, type SqlBool, sql } from "kysely";
import { type AccountApproval, accountApproval, CONNECTION_TYPES } from "../core/autotrade/account-approval.js";
import type { Tx } from "../store/transaction.js";

/**
 * Whether brokerage accounts are approved where their geo-site requires it
 * (src/core/autotrade/account-approval.ts has the rule): read for the desk,
 * which applies it to the copies, and as an SQL condition for the reads.
 */

const CHUNK = 500;

/** Each account's approval state, by account id. */
export async function accountApprovals(db: Tx, accountIds: readonly number[]): Promise<Map<number, AccountApproval>> {
  const states = new Map<number, AccountApproval>();
  for (let first = 0; first < accountIds.length; first += CHUNK) {
    const rows = await db
      .selectFrom("broker_accounts as b")
      .innerJoin("persons as p", "p.id", "b.person_id")
      .leftJoin("sites as ws", "ws.id", "p.white_label_site_id")
      .leftJoin("sites as g", (join) => join.on(sql`g.id`, "=", sql`coalesce(p.geo_site_id, ws.geo_site_id)`))
      .leftJoin("approved_accounts as aa", (join) =>
        join
          .onRef("aa.account_id", "=", "b.account_id")
          .onRef("aa.geo_site_id", "=", "g.id")
          .on("aa.connection_type", "=", CONNECTION_TYPES.Autotrade)
          .on("aa.deleted_at", "is", null),
      )
      .select(["b.account_id", "b.is_paper", "g.requires_account_approval", "aa.is_cfd"])
      .where("b.account_id", "in", accountIds.slice(first, first + CHUNK))
      .execute();
    for (const row of rows) {
      states.set(
        row.account_id,
        accountApproval({
          required: row.requires_account_approval === 1,
          isPaper: row.is_paper === 1,
          approval: row.is_cfd === null ? null : { isCfd: row.is_cfd === 1 },
        }),
      );
    }
  }
  return states;
}

/**
 * The same rule in SQL, for a query with the brokerage account as `b` and the
 * person's geo-site as `geo` (a left join): true when the account may open
 * positions.
 */
export function approvedSql(geo: string): Expression<SqlBool> {
  return sql<SqlBool>`(coalesce(${sql.ref(`${geo}.requires_account_approval`)}, 0) = 0 or b.is_paper = 1 or exists (
    select 1 from approved_accounts aa where aa.account_id = b.account_id and aa.geo_site_id = ${sql.ref(`${geo}.id`)}
      and aa.connection_type = ${CONNECTION_TYPES.Autotrade} and aa.deleted_at is null))`;
}

/** The same as 1 or 0 (a column both backends read alike). */
export function approvedFlagSql(geo: string): RawBuilder<number> {
  return sql<number>`case when ${approvedSql(geo)} then 1 else 0 end`;
}

/** Where the person's geo-site (`geo`) requires approval of the account `b` (a live one). */
export function approvalRequiredSql(geo: string): Expression<SqlBool> {
  return sql<SqlBool>`(coalesce(${sql.ref(`${geo}.requires_account_approval`)}, 0) = 1 and b.is_paper = 0)`;
}
