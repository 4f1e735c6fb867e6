import { type Static, Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { amountProblemMessage, readAmount } from "../../../core/amounts.js";
import { APPROVAL_STATUSES } from "../../../core/autotrade/approvals.js";
import { MAX_SCALING_PERCENTAGE } from "../../../core/autotrade/settings.js";
import { compare, formatDecimal, fromInteger } from "../../../core/decimal.js";
import { refuse } from "../../../core/errors.js";
import {
  type ApprovalRequestBody,
  type ApprovalView,
  approvalPath,
  approvalStatus,
  requestApproval,
} from "../../../services/autotrade-approvals.js";
import { START_AUTOTRADE_FIELDS } from "../autotrade-start-input.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation, type OperationContext } from "../operation.js";
import { DateTime, Id, Nullable } from "../schemas.js";

/**
 * The white-label autotrade approval flow (API.md States, 4.2, 4.3): a site
 * asks its customer to approve an autotrade setup, which starts once the
 * customer approves at ApprovalUrl. White-label admins act on their own site;
 * service admins name one with WhiteLabelSiteId.
 */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin");
const WhiteLabelSiteId = Type.Optional(Id({ description: "Service admin keys only: the site to act on" }));
const _Count = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description }));

/** The StartAutotrade body (4.3), the same under both spellings. */
const StartAutotradeInput = Type.Object({ ...START_AUTOTRADE_FIELDS, WhiteLabelSiteId });

export const AutotradeApprovalRecord = Type.Object(
  {
    ApprovalRequestId: Type.Integer(),
    Status: Type.Union(
      APPROVAL_STATUSES.map((status) => Type.Literal(status)),
      { description: "The request's state; the transitions are in docs/decisions.md" },
    ),
    StatusDetail: Type.String(),
    ApprovalUrl: Nullable(
      Type.String({
        description:
          "Only in PendingCustomer: the page's path on the white-label server, /Approvals/<token>, where the customer approves or declines; null otherwise",
      }),
    ),
    ExpiresAt: Nullable(
      DateTime({
        description:
          "PendingCustomer: when the request expires unless approved; PendingBroker: when it fails unless the account has reached the service; null otherwise",
      }),
    ),
    PersonId: Type.Integer(),
    Account: Type.String(),
    BrokerId: Type.Integer(),
    StrategyId: Type.Integer(),
    WhiteLabelSiteId: Type.Integer(),
    SetupId: Nullable(Type.Integer({ description: "Once Completed: the autotrade setup started or modified" })),
    SupersededBy: Nullable(Type.Integer({ description: "Superseded by a newer request: its ApprovalRequestId" })),
    CreatedAt: DateTime(),
    LastModified: DateTime(),
  },
  { title: "AutotradeApprovalRequest" },
);

function approvalRecord({ row, token }: ApprovalView) {
  const waits = row.status === "PendingCustomer" || row.status === "PendingBroker";
  return {
    ApprovalRequestId: row.id,
    Status: row.status,
    StatusDetail: row.status_detail ?? "",
    ApprovalUrl: token === null ? null : approvalPath(token),
    ExpiresAt: waits ? new Date(row.expires_at) : null,
    PersonId: row.person_id,
    Account: row.account_number,
    BrokerId: row.broker_id,
    StrategyId: row.strategy_id,
    WhiteLabelSiteId: row.site_id,
    SetupId: row.setup_id,
    SupersededBy: row.superseded_by,
    CreatedAt: new Date(row.created_at),
    LastModified: new Date(row.updated_at),
  };
}

const MAX_SCALING = fromInteger(MAX_SCALING_PERCENTAGE);

/** The body as kept with the request: ScalingPercentage as exact text, the fields not given left out. */
function requestBody(input: Static<typeof StartAutotradeInput>): ApprovalRequestBody {
  const { WhiteLabelSiteId: _site, ScalingPercentage, ...fields } = input;
  const read = readAmount(ScalingPercentage);
  if (!read.ok)
    throw refuse("InvalidValue", {
      field: "ScalingPercentage",
      message: amountProblemMessage("ScalingPercentage", read.problem),
    });
  if (read.value <= 0n || compare(read.value, MAX_SCALING) > 0)
    throw refuse("InvalidValue", {
      field: "ScalingPercentage",
      message: `ScalingPercentage must be above 0 and at most ${MAX_SCALING_PERCENTAGE}`,
    });
  return { ...fields, ScalingPercentage: formatDecimal(read.value) };
}

const startHandler = async (ctx: OperationContext, input: Static<typeof StartAutotradeInput>) => [
  approvalRecord(await requestApproval(ctx, requestBody(input), input.WhiteLabelSiteId)),
];

const START_SUMMARY =
  "Asks a customer of the site to approve an autotrade setup (new, or a modification of the live one): nothing starts until the customer approves at ApprovalUrl. The customer's older pending requests for the same account and strategy are superseded. Poll GetAutotradeApprovalStatus; a completion webhook is a courtesy signal.";

const START_EXAMPLE = {
  Account: "SIM-10042",
  PersonId: EXAMPLE.customerId,
  StrategyId: EXAMPLE.resoldStrategyId,
  BrokerId: 1,
  ScalingPercentage: 50,
  EnableStocks: true,
  MaxStocksDollars: 25_000,
  AutoStopLossDollars: 1_500,
  WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
};

export const autotradeApprovalOperations = [
  defineOperation({
    id: "StartAutotrade",
    method: "POST",
    path: "/Autotrade/StartAutotrade",
    servers: ["WL"],
    summary: START_SUMMARY,
    input: StartAutotradeInput,
    result: AutotradeApprovalRecord,
    permission: siteAdministrators,
    paginated: false,
    example: START_EXAMPLE,
    handler: startHandler,
  }),
  defineOperation({
    id: "WhiteLabelStartAutotrade",
    method: "POST",
    path: "/Autotrade/WhiteLabelStartAutotrade",
    servers: ["WL"],
    summary: `The other white-label description's spelling of StartAutotrade, with the same body and answer. ${START_SUMMARY}`,
    input: StartAutotradeInput,
    result: AutotradeApprovalRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { ...START_EXAMPLE, ScalingPercentage: 75 },
    handler: startHandler,
  }),
  defineOperation({
    id: "GetAutotradeApprovalStatus",
    method: "GET",
    path: "/Autotrade/GetAutotradeApprovalStatus",
    servers: ["WL"],
    summary:
      "One autotrade approval request of the site: its Status (the source of truth), and ApprovalUrl while the customer has to act (PendingCustomer).",
    input: Type.Object({ ApprovalRequestId: Id(), WhiteLabelSiteId }),
    result: AutotradeApprovalRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { ApprovalRequestId: EXAMPLE.approvalRequestId, WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input) => [
      approvalRecord(await approvalStatus(ctx, input.ApprovalRequestId, input.WhiteLabelSiteId)),
    ],
  }),
];
