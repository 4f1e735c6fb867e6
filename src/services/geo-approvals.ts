import { administers } from "../core/access.js";
import { CONNECTION_TYPES } from "../core/autotrade/account-approval.js";
import type { AccountEvent } from "../core/autotrade/account-events.js";
import { refuse } from "../core/errors.js";
import type { ConnectionType } from "../store/schema.js";
import { afterCommit, type Tx, withTransaction } from "../store/transaction.js";
import { recordAccountEvents } from "./account-events.js";
import { LIVE_SETUP_STATUSES } from "./autotrade-reads.js";
import { memberOf, personsWithSites } from "./person-view.js";
import type { RequestContext, Runtime } from "./runtime.js";
import { findGeoSite } from "./sites-lookup.js";

/**
 * A geo-site's approvals of its members' brokerage accounts
 * (ApprovedAutotradeAccount, ApprovedBrokerTransmitAccount): the geo-site's
 * administrators and service admins add and delete them; they show in the
 * person's ApprovedAccounts. An autotrade approval lets the account open
 * positions where the geo-site requires approval (account-approval.ts); a
 * broker-transmit approval is recorded and shown, and gates nothing: the
 * service does not broker-transmit. Deleted approvals are kept, marked.
 */

export interface ApprovalChange {
  readonly connectionType: ConnectionType;
  readonly account: string;
  readonly personId?: number | undefined;
  readonly brokerId?: number | undefined;
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSite?: string | undefined;
  readonly isCfd?: boolean | undefined;
}

/** An approval as the operations answer it: the row and its geo-site's name. */
export interface ApprovalView {
  readonly id: number;
  readonly connectionType: ConnectionType;
  readonly account: string;
  readonly personId: number;
  readonly brokerId: number;
  readonly whiteLabelSiteId: number | null;
  readonly geoSite: string;
  readonly isCfd: boolean;
  readonly isDeleted: boolean;
  readonly addedAt: number;
  readonly addedByPersonId: number;
}

const liveKeyOf = (type: ConnectionType, geoSiteId: number, accountId: number) => `${type}:${geoSiteId}:${accountId}`;

const KIND_NAMES: Readonly<Record<ConnectionType, string>> = { 0: "autotrading", 1: "broker transmit" };

function approvalRows(db: Tx) {
  return db
    .selectFrom("approved_accounts as a")
    .innerJoin("sites as g", "g.id", "a.geo_site_id")
    .selectAll("a")
    .select("g.name as geo_name");
}

type ApprovalRow = Awaited<ReturnType<ReturnType<typeof approvalRows>["executeTakeFirstOrThrow"]>>;

const viewOf = (row: ApprovalRow): ApprovalView => ({
  id: row.id,
  connectionType: row.connection_type,
  account: row.account_number,
  personId: row.person_id,
  brokerId: row.broker_id,
  whiteLabelSiteId: row.white_label_site_id,
  geoSite: row.geo_name,
  isCfd: row.is_cfd === 1,
  isDeleted: row.deleted_at !== null,
  addedAt: row.added_at,
  addedByPersonId: row.added_by_person_id,
});

/**
 * POST: the person's geo-site approves the account (the same again answers
 * the approval; IsCFD, when sent, is set on it). The person must be one the
 * caller administers as a geo-site member, the account theirs at the broker.
 */
export async function approveAccount(ctx: RequestContext, change: ApprovalChange): Promise<ApprovalView> {
  const { personId, brokerId } = change;
  if (personId === undefined) throw refuse("MissingValue", { field: "PersonId", message: "PersonId is required" });
  if (brokerId === undefined) throw refuse("MissingValue", { field: "BrokerId", message: "BrokerId is required" });
  const now = ctx.clock.nowMs();
  return withTransaction(ctx, async (inner) => {
    const { tx } = inner;
    const person = await personsWithSites(tx).where("p.id", "=", personId).executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${personId}` });
    if (!administers(ctx.caller, memberOf(person)))
      throw refuse("Forbidden", { field: "PersonId", message: "Only the person's geo-site administrators" });
    const geoSiteId = await approvingGeoSite(ctx, tx, change.geoSite, person.geo_id, personId);
    if (change.whiteLabelSiteId !== undefined && change.whiteLabelSiteId !== person.white_label_site_id)
      throw refuse("InvalidValue", {
        field: "WhiteLabelSiteId",
        message: `Person ${personId} is not a customer of white-label site ${change.whiteLabelSiteId}`,
      });
    const broker = await tx.selectFrom("brokers").select("id").where("id", "=", brokerId).executeTakeFirst();
    if (!broker) throw refuse("NotFound", { field: "BrokerId", message: `No broker ${brokerId}` });
    const account = await tx
      .selectFrom("broker_accounts")
      .select(["account_id", "person_id"])
      .where("broker_id", "=", brokerId)
      .where("account_number", "=", change.account)
      .executeTakeFirst();
    if (!account || account.person_id !== personId)
      throw refuse("NotFound", {
        field: "Account",
        message: `Person ${personId} has no account ${change.account} at broker ${brokerId}`,
      });
    const liveKey = liveKeyOf(change.connectionType, geoSiteId, account.account_id);
    // Two administrators approving at once: the unique live key lets one row in, the other updates it.
    const made = await tx
      .insertInto("approved_accounts")
      .values({
        connection_type: change.connectionType,
        geo_site_id: geoSiteId,
        person_id: personId,
        account_id: account.account_id,
        broker_id: brokerId,
        account_number: change.account,
        white_label_site_id: person.white_label_site_id,
        is_cfd: change.isCfd === true ? 1 : 0,
        added_at: now,
        added_by_person_id: Number(ctx.caller.personId),
        deleted_at: null,
        deleted_by_person_id: null,
        live_key: liveKey,
      })
      .onConflict((oc) => oc.column("live_key").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (made && change.connectionType === CONNECTION_TYPES.Autotrade) {
      const cfd = change.isCfd === true ? " (CFDs allowed)" : "";
      await recordAccountEvents(tx, [
        event(
          account.account_id,
          personId,
          "ApprovalGranted",
          `Approved for autotrading by ${person.geo_name}${cfd}`,
          now,
        ),
      ]);
    }
    if (!made && change.isCfd !== undefined) {
      await tx
        .updateTable("approved_accounts")
        .set({ is_cfd: change.isCfd ? 1 : 0 })
        .where("live_key", "=", liveKey)
        .execute();
    }
    await tellSetups(inner, [account.account_id]);
    return viewOf(await approvalRows(tx).where("a.live_key", "=", liveKey).executeTakeFirstOrThrow());
  });
}

/**
 * DELETE: the live approvals of that kind of the account (narrowed by the
 * other fields) are deleted, on the caller's geo-site (service admins: any,
 * or the one named). None: 404 on Account.
 */
export async function deleteApprovals(ctx: RequestContext, change: ApprovalChange): Promise<ApprovalView[]> {
  const now = ctx.clock.nowMs();
  return withTransaction(ctx, async (inner) => {
    const { tx } = inner;
    let geoSiteId: number | undefined;
    if (change.geoSite !== undefined) {
      const geo = await findGeoSite(tx, change.geoSite);
      if (!geo) throw refuse("NotFound", { field: "GeoSite", message: `No geo-site ${change.geoSite}` });
      geoSiteId = geo.id;
    }
    if (ctx.caller.role !== "admin") {
      if (geoSiteId !== undefined && geoSiteId !== ctx.caller.geoSiteId)
        throw refuse("Forbidden", { field: "GeoSite", message: "Not an administrator of that geo-site" });
      geoSiteId = ctx.caller.geoSiteId ?? -1;
    }
    let query = approvalRows(tx)
      .where("a.connection_type", "=", change.connectionType)
      .where("a.account_number", "=", change.account)
      .where("a.deleted_at", "is", null);
    if (geoSiteId !== undefined) query = query.where("a.geo_site_id", "=", geoSiteId);
    if (change.personId !== undefined) query = query.where("a.person_id", "=", change.personId);
    if (change.brokerId !== undefined) query = query.where("a.broker_id", "=", change.brokerId);
    if (change.whiteLabelSiteId !== undefined)
      query = query.where("a.white_label_site_id", "=", change.whiteLabelSiteId);
    if (change.isCfd !== undefined) query = query.where("a.is_cfd", "=", change.isCfd ? 1 : 0);
    const rows = await query.orderBy("a.id").execute();
    if (rows.length === 0)
      throw refuse("NotFound", {
        field: "Account",
        message: `No ${KIND_NAMES[change.connectionType]} approval of account ${change.account}`,
      });
    const ids = rows.map((row) => row.id);
    // Only rows still live are deleted: a concurrent DELETE of the same rows deletes them once.
    const deleted = await tx
      .updateTable("approved_accounts")
      .set({ deleted_at: now, deleted_by_person_id: Number(ctx.caller.personId), live_key: null })
      .where("id", "in", ids)
      .where("deleted_at", "is", null)
      .returning("id")
      .execute();
    const gone = new Set(deleted.map((row) => row.id));
    if (change.connectionType === CONNECTION_TYPES.Autotrade) {
      await recordAccountEvents(
        tx,
        rows
          .filter((row) => gone.has(row.id))
          .map((row) =>
            event(row.account_id, row.person_id, "ApprovalDeleted", `Approval deleted by ${row.geo_name}`, now),
          ),
      );
    }
    await tellSetups(inner, [...new Set(rows.map((row) => row.account_id))]);
    return rows.map((row) => viewOf({ ...row, deleted_at: now }));
  });
}

/** The people's live approvals (Person.ApprovedAccounts), oldest first, by person. */
export async function approvedAccountsOf(db: Tx, personIds: readonly number[]): Promise<Map<number, ApprovalView[]>> {
  const byPerson = new Map<number, ApprovalView[]>();
  if (personIds.length === 0) return byPerson;
  const rows = await approvalRows(db)
    .where("a.person_id", "in", personIds)
    .where("a.deleted_at", "is", null)
    .orderBy("a.id")
    .execute();
  for (const row of rows) byPerson.set(row.person_id, [...(byPerson.get(row.person_id) ?? []), viewOf(row)]);
  return byPerson;
}

/**
 * The geo-site approving: the one named (GeoSite, by name or domain), which
 * must be the person's and, for a geo-site administrator, theirs; else the
 * person's.
 */
async function approvingGeoSite(
  ctx: RequestContext,
  tx: Tx,
  geoSite: string | undefined,
  personGeoId: number | null,
  personId: number,
): Promise<number> {
  if (geoSite !== undefined) {
    const geo = await findGeoSite(tx, geoSite);
    if (!geo) throw refuse("NotFound", { field: "GeoSite", message: `No geo-site ${geoSite}` });
    if (ctx.caller.role !== "admin" && geo.id !== ctx.caller.geoSiteId)
      throw refuse("Forbidden", { field: "GeoSite", message: "Not an administrator of that geo-site" });
    if (geo.id !== personGeoId)
      throw refuse("InvalidValue", {
        field: "GeoSite",
        message: `Person ${personId} is not a member of geo-site ${geoSite}`,
      });
    return geo.id;
  }
  if (personGeoId === null)
    throw refuse("WrongState", { field: "PersonId", message: `Person ${personId} is a member of no geo-site` });
  return personGeoId;
}

const event = (
  accountId: number,
  personId: number,
  kind: AccountEvent["kind"],
  reason: string,
  atMs: number,
): AccountEvent => ({ accountId, personId, kind, reason, atMs });

/** The desk reads the accounts' approval again once the change has committed. */
async function tellSetups(ctx: RequestContext & { readonly tx: Tx }, accountIds: readonly number[]): Promise<void> {
  const setups = await ctx.tx
    .selectFrom("autotrade_setups")
    .select("id")
    .where("account_id", "in", accountIds)
    .where("status", "in", LIVE_SETUP_STATUSES)
    .execute();
  const ids = setups.map((setup) => setup.id);
  if (ids.length > 0) afterCommit(ctx, () => ctx.autotrade?.setupsChanged(ids));
}

/**
 * Whether the geo-site requires its members' live accounts to be approved
 * before they open autotrade positions (the operator's setting). The desks
 * read it again on their next pass.
 */
export async function setAccountApprovalRequired(
  runtime: Runtime,
  geoSiteId: number,
  required: boolean,
): Promise<void> {
  await withTransaction(runtime, async ({ tx }) => {
    const site = await tx.selectFrom("sites").select("kind").where("id", "=", geoSiteId).executeTakeFirst();
    if (site?.kind !== "geo") throw refuse("NotFound", { field: "Id", message: `No geo-site ${geoSiteId}` });
    await tx
      .updateTable("sites")
      .set({ requires_account_approval: required ? 1 : 0 })
      .where("id", "=", geoSiteId)
      .execute();
  });
}
