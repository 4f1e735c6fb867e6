import { administers, type Caller } from "../core/access.js";
import { refuse } from "../core/errors.js";
import type { Tx } from "../store/transaction.js";
import { personActedOn } from "./autotrade-reads.js";
import { memberOf, personsWithSites } from "./person-view.js";

/**
 * The brokerage account an autotrade account operation names (Account, with
 * PersonId where the spec gives one, and BrokerId), for a caller who may act
 * on the account's person: the person, their site's administrators and
 * service admins (personActedOn, as for setups).
 *
 * Account numbers are the brokers': two brokers may each have an account of
 * the same number (even of one person). When the caller may act on more than
 * one account of the number, BrokerId says which (an addition to the spec's
 * query where it has none); without it the call is refused naming BrokerId.
 * An account of a person the caller may not act on is not there for it
 * (404 naming Account): account numbers are not public, unlike people's ids.
 */
export interface NamedAccount {
  /** The service's id of the account (accounts.id). */
  readonly accountId: number;
  readonly personId: number;
  readonly brokerId: number;
  readonly brokerName: string;
  /** The account as its broker names it. */
  readonly account: string;
  readonly isPaper: boolean;
  readonly isLinked: boolean;
  /** What the account was opened with (and what a paper reset brings it back to). */
  readonly startingCash: string;
  /** When the paper account was last reset; null: never. */
  readonly resetAt: number | null;
}

export interface AccountName {
  /** The person whose account it is, when the operation names one (refused on PersonId unless acted on). */
  readonly personId?: number | undefined;
  readonly account: string;
  readonly brokerId?: number | undefined;
}

function accountRows(db: Tx, name: AccountName) {
  let query = db
    .selectFrom("broker_accounts as b")
    .innerJoin("accounts as a", "a.id", "b.account_id")
    .innerJoin("brokers as br", "br.id", "b.broker_id")
    .select([
      "b.account_id",
      "b.person_id",
      "b.broker_id",
      "br.name as broker_name",
      "b.account_number",
      "b.is_paper",
      "b.is_linked",
      "a.starting_cash",
      "b.reset_at",
    ])
    .where("b.account_number", "=", name.account);
  if (name.personId !== undefined) query = query.where("b.person_id", "=", name.personId);
  if (name.brokerId !== undefined) query = query.where("b.broker_id", "=", name.brokerId);
  return query.orderBy("b.broker_id").execute();
}

type AccountRow = Awaited<ReturnType<typeof accountRows>>[number];

/** The person ids whose people the caller may act on, among these. */
async function actedOn(db: Tx, caller: Caller, personIds: readonly number[]): Promise<Set<number>> {
  const people = await personsWithSites(db)
    .where("p.id", "in", [...new Set(personIds)])
    .execute();
  return new Set(
    people
      .map(memberOf)
      .filter((member) => caller.personId === member.personId || administers(caller, member))
      .map((member) => Number(member.personId)),
  );
}

/** The account the request names, for this caller; refused on PersonId, Account or BrokerId otherwise. */
export async function namedAccount(db: Tx, caller: Caller, name: AccountName): Promise<NamedAccount> {
  if (name.personId !== undefined) await personActedOn(db, caller, name.personId);
  let rows: AccountRow[] = await accountRows(db, name);
  if (name.personId === undefined && rows.length > 0) {
    const allowed = await actedOn(
      db,
      caller,
      rows.map((row) => row.person_id),
    );
    rows = rows.filter((row) => allowed.has(row.person_id));
  }
  const [row, other] = rows;
  if (!row) {
    const whose = name.personId === undefined ? "" : ` of person ${name.personId}`;
    const where = name.brokerId === undefined ? "" : ` at broker ${name.brokerId}`;
    throw refuse("NotFound", { field: "Account", message: `No account ${name.account}${whose}${where}` });
  }
  if (other) {
    throw refuse("MissingValue", {
      field: "BrokerId",
      message: `Account ${name.account} is at more than one broker: name BrokerId`,
      meta: { BrokerIds: rows.map((r) => r.broker_id) },
    });
  }
  return {
    accountId: row.account_id,
    personId: row.person_id,
    brokerId: row.broker_id,
    brokerName: row.broker_name,
    account: row.account_number,
    isPaper: row.is_paper === 1,
    isLinked: row.is_linked === 1,
    startingCash: row.starting_cash,
    resetAt: row.reset_at === null ? null : Number(row.reset_at),
  };
}
