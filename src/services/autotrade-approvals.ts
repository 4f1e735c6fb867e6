import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Selectable } from "kysely";
import {
  APPROVAL_DETAILS,
  APPROVAL_LIFETIME_MS,
  type ApprovalEvent,
  isFinal,
  nextApprovalStatus,
} from "../core/autotrade/approvals.js";
import type { StartAutotradeFields } from "../core/autotrade/settings.js";
import { decimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { AutotradeApprovalsTable } from "../store/schema.js";
import { settingOrInit } from "../store/settings.js";
import { type Tx, transaction, withTransaction } from "../store/transaction.js";
import { owesCompletion } from "./autotrade-approval-events.js";
import { liveSetupOf, supersedePendingApprovals } from "./autotrade-setups.js";
import type { RequestContext, Runtime } from "./runtime.js";
import { actingSite, siteCustomer } from "./site-customer.js";
import { follows } from "./subscriptions.js";

/**
 * White-label autotrade approval requests (StartAutotrade and
 * WhiteLabelStartAutotrade on WL, GetAutotradeApprovalStatus, and the page at
 * ApprovalUrl). A request starts nothing: the customer reviews the setup on
 * the page, reached by an unguessable token, and approves or declines it.
 * As the checkout's, the token and the page's form token are HMACs of the
 * request's nonce under a service secret; the table keeps the token's hash.
 * Switching trading on once approved is ./autotrade-approval-switch.ts.
 */

export type ApprovalRow = Selectable<AutotradeApprovalsTable>;

/** The page's address on the white-label server. */
export const approvalPath = (token: string): string => `/Approvals/${token}`;

const SECRET_SETTING = "approval_secret";

const secretOf = (db: Tx) => settingOrInit(db, SECRET_SETTING, randomBytes(32).toString("base64url"));

const mac = (secret: string, purpose: string, nonce: string) =>
  createHmac("sha256", secret).update(`${purpose}:${nonce}`).digest("base64url");

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** The StartAutotrade body (4.3), as received and kept with the request. */
export interface ApprovalRequestBody extends StartAutotradeFields {
  readonly Account: string;
  readonly PersonId: number;
  readonly StrategyId: number;
  readonly BrokerId: number;
  /** A positive decimal as text (exact). */
  readonly ScalingPercentage: string;
  readonly DoNotJoinOpenPositions?: boolean | undefined;
}

/** The record the operations answer: the request and, while the customer has to act, the page's token. */
export interface ApprovalView {
  readonly row: ApprovalRow;
  readonly token: string | null;
}

async function viewOf(db: Tx, row: ApprovalRow): Promise<ApprovalView> {
  return { row, token: row.status === "PendingCustomer" ? mac(await secretOf(db), "page", row.nonce) : null };
}

export const requestBodyOf = (row: ApprovalRow): ApprovalRequestBody => JSON.parse(row.request) as ApprovalRequestBody;

/**
 * The customer may autotrade only a strategy they follow (a live real
 * subscription or grant) or own; refused naming StrategyId otherwise.
 */
export async function requireFollower(ctx: Runtime & { readonly tx: Tx }, personId: number, strategyId: number) {
  const strategy = await ctx.tx
    .selectFrom("strategies")
    .select(["id", "is_alive", "owner_person_id"])
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (!strategy) throw refuse("NotFound", { field: "StrategyId", message: `No strategy ${strategyId}` });
  if (strategy.is_alive !== 1)
    throw refuse("WrongState", { field: "StrategyId", message: `Strategy ${strategyId} is not alive` });
  if (strategy.owner_person_id !== personId && !(await follows(ctx, strategyId, personId)))
    throw refuse("WrongState", {
      field: "StrategyId",
      message: `Customer ${personId} does not follow strategy ${strategyId}: start a subscription first`,
    });
}

/**
 * StartAutotrade / WhiteLabelStartAutotrade on WL: a new approval request in
 * PendingCustomer; the customer's older pending requests for the same setup
 * are superseded by it. A modification of the live setup is requested the
 * same way (4.3 rule 2: fresh customer approval).
 */
export async function requestApproval(
  ctx: RequestContext,
  body: ApprovalRequestBody,
  requestedSiteId: number | undefined,
): Promise<ApprovalView> {
  return withTransaction(ctx, async (inner) => {
    const { tx } = inner;
    const nowMs = ctx.clock.nowMs();
    const { siteId, personId } = await siteCustomer(tx, ctx, body.PersonId, requestedSiteId);
    await requireFollower(inner, personId, body.StrategyId);
    const broker = await tx.selectFrom("brokers").selectAll().where("id", "=", body.BrokerId).executeTakeFirst();
    if (!broker) throw refuse("NotFound", { field: "BrokerId", message: `No broker ${body.BrokerId}` });
    if (broker.is_enabled !== 1)
      throw refuse("WrongState", { field: "BrokerId", message: `Broker ${body.BrokerId} is not enabled` });
    const account = await tx
      .selectFrom("broker_accounts")
      .select(["account_id", "person_id"])
      .where("broker_id", "=", body.BrokerId)
      .where("account_number", "=", body.Account)
      .executeTakeFirst();
    // An account not at the service yet is waited for once approved (PendingBroker); another person's is no one's to name.
    if (account && account.person_id !== personId)
      throw refuse("NotFound", {
        field: "Account",
        message: `Person ${personId} has no account ${body.Account} at broker ${body.BrokerId}`,
      });
    if (
      account &&
      body.DoNotJoinOpenPositions !== undefined &&
      (await liveSetupOf(tx, account.account_id, body.StrategyId))
    )
      throw refuse("InvalidValue", {
        field: "DoNotJoinOpenPositions",
        message: "DoNotJoinOpenPositions applies to new setups only: it must not be sent when modifying one",
      });
    const target = { personId, strategyId: body.StrategyId, account: body.Account };
    const superseded = await supersedePendingApprovals(tx, target, nowMs, null);
    const nonce = randomBytes(24).toString("base64url");
    const made = await tx
      .insertInto("autotrade_approvals")
      .values({
        site_id: siteId,
        person_id: personId,
        strategy_id: body.StrategyId,
        broker_id: body.BrokerId,
        account_number: body.Account,
        request: JSON.stringify(body),
        status: "PendingCustomer",
        status_detail: APPROVAL_DETAILS.PendingCustomer,
        nonce,
        token_hash: hashOf(mac(await secretOf(tx), "page", nonce)),
        setup_id: null,
        superseded_by: null,
        created_at: nowMs,
        updated_at: nowMs,
        expires_at: nowMs + APPROVAL_LIFETIME_MS,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (superseded.length > 0)
      await tx
        .updateTable("autotrade_approvals")
        .set({ superseded_by: made.id })
        .where("id", "in", superseded)
        .execute();
    return viewOf(tx, made);
  });
}

/** GetAutotradeApprovalStatus: one request of the caller's site (expired by now if due); 404 for any other. */
export async function approvalStatus(
  ctx: RequestContext,
  approvalId: number,
  requestedSiteId: number | undefined,
): Promise<ApprovalView> {
  return withTransaction(ctx, async ({ tx }) => {
    const siteId = await actingSite(tx, ctx, requestedSiteId);
    const row = await tx
      .selectFrom("autotrade_approvals")
      .selectAll()
      .where("id", "=", approvalId)
      .where("site_id", "=", siteId)
      .executeTakeFirst();
    if (!row)
      throw refuse("NotFound", {
        field: "ApprovalRequestId",
        message: `No approval request ${approvalId} on site ${siteId}`,
      });
    return viewOf(tx, await expireIfDue(tx, row, ctx.clock.nowMs()));
  });
}

/**
 * Moves a request by `event` if it is still in the status read (so of two
 * processes only one moves it); a final status owes the site its completion
 * webhook, in the same transaction. Answers the moved row, or null.
 */
export async function moveApproval(
  tx: Tx,
  row: ApprovalRow,
  event: ApprovalEvent,
  nowMs: number,
  change: { readonly detail?: string; readonly setupId?: number; readonly expiresAt?: number } = {},
): Promise<ApprovalRow | null> {
  const status = nextApprovalStatus(row.status, event);
  if (status === null) return null;
  const moved = await tx
    .updateTable("autotrade_approvals")
    .set({
      status,
      status_detail: change.detail ?? APPROVAL_DETAILS[status],
      updated_at: nowMs,
      ...(change.setupId === undefined ? {} : { setup_id: change.setupId }),
      ...(change.expiresAt === undefined ? {} : { expires_at: change.expiresAt }),
    })
    .where("id", "=", row.id)
    .where("status", "=", row.status)
    .returningAll()
    .executeTakeFirst();
  if (moved && isFinal(moved.status)) await owesCompletion(tx, moved, nowMs);
  return moved ?? null;
}

export async function expireIfDue(tx: Tx, row: ApprovalRow, nowMs: number): Promise<ApprovalRow> {
  if (row.status !== "PendingCustomer" || nowMs < row.expires_at) return row;
  return (await moveApproval(tx, row, "expire", nowMs)) ?? row;
}

/** What the page shows: the request, the names it refers to and the form token its buttons carry. */
export interface ApprovalPage {
  readonly row: ApprovalRow;
  readonly body: ApprovalRequestBody;
  readonly strategyName: string;
  readonly brokerName: string;
  readonly siteName: string;
  readonly formToken: string;
}

/** The request a page token opens (expired by now if due), or undefined for a token that opens none. */
export function approvalPage(runtime: Runtime, token: string): Promise<ApprovalPage | undefined> {
  return transaction(runtime.storage, (tx) => readPage(tx, token, runtime.clock.nowMs()));
}

async function readPage(tx: Tx, token: string, nowMs: number): Promise<ApprovalPage | undefined> {
  const found = await tx
    .selectFrom("autotrade_approvals")
    .selectAll()
    .where("token_hash", "=", hashOf(token))
    .executeTakeFirst();
  if (!found) return undefined;
  const row = await expireIfDue(tx, found, nowMs);
  const names = await tx
    .selectFrom("strategies as st")
    .innerJoin("brokers as b", (join) => join.on("b.id", "=", row.broker_id))
    .innerJoin("sites as si", (join) => join.on("si.id", "=", row.site_id))
    .select(["st.name as strategyName", "b.name as brokerName", "si.name as siteName"])
    .where("st.id", "=", row.strategy_id)
    .executeTakeFirstOrThrow();
  return { row, body: requestBodyOf(row), ...names, formToken: mac(await secretOf(tx), "form", row.nonce) };
}

/** Whether a form's token is the one its request's page carries. */
function checkFormToken(page: ApprovalPage, presented: string): void {
  const expected = Buffer.from(page.formToken);
  const given = Buffer.from(presented);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw refuse("Forbidden", { message: "The form is stale or not this request's: reload the page" });
  }
}

/** The customer declined on the page: Failed, nothing started. */
export async function declineApproval(runtime: Runtime, token: string, formToken: string): Promise<void> {
  await transaction(runtime.storage, async (tx) => {
    const nowMs = runtime.clock.nowMs();
    const page = await readPage(tx, token, nowMs);
    if (!page) throw refuse("NotFound", { message: "No such approval request" });
    checkFormToken(page, formToken);
    await moveApproval(tx, page.row, "decline", nowMs, { detail: "The customer declined the setup" });
  });
}

/**
 * The customer approved on the page (ticking consent): Processing, committed
 * before trading is switched on, so a crash between leaves a request the
 * scheduler switches on. Answers the request's id when it moved.
 */
export async function approveApproval(
  runtime: Runtime,
  token: string,
  formToken: string,
  consented: boolean,
): Promise<number | null> {
  return transaction(runtime.storage, async (tx) => {
    const nowMs = runtime.clock.nowMs();
    const page = await readPage(tx, token, nowMs);
    if (!page) throw refuse("NotFound", { message: "No such approval request" });
    checkFormToken(page, formToken);
    if (page.row.status !== "PendingCustomer") return null;
    if (!consented) throw refuse("MissingValue", { field: "Consent", message: "Tick the consent box to approve" });
    const moved = await moveApproval(tx, page.row, "approve", nowMs);
    return moved?.id ?? null;
  });
}

/** ScalingPercentage as the setup takes it. */
export const scalingOf = (body: ApprovalRequestBody) => decimal(body.ScalingPercentage);
