import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { CONNECTION_TYPES, type ConnectionTypeName } from "../../../core/autotrade/account-approval.js";
import {
  type ApprovalChange,
  type ApprovalView,
  approveAccount,
  deleteApprovals,
} from "../../../services/geo-approvals.js";
import type { ConnectionType } from "../../../store/schema.js";
import { ApprovedAccountDTORecord } from "../autotrade-admin-records.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation, type Operation } from "../operation.js";
import { Id } from "../schemas.js";
import { AccountNumber, BrokerId } from "./autotrade-setups.js";

/**
 * The geo-sites' approvals of brokerage accounts (API.md 4.2, GEO):
 * ApprovedAutotradeAccount and ApprovedBrokerTransmitAccount, each a POST
 * that adds and a DELETE that deletes, for the geo-site's administrators
 * (their geo-site's members) and service admins.
 */

const geoAdministrators = onlyRoles("admin", "geo-admin");

const GeoSite = Type.Optional(
  Type.String({ maxLength: 253, description: "The approving geo-site's name or domain; default: the person's" }),
);
const WhiteLabelSiteId = Type.Optional(Id({ description: "The person's white-label site" }));

const dtoOf = (approval: ApprovalView) => ({
  Id: approval.id,
  Account: approval.account,
  PersonId: approval.personId,
  BrokerId: approval.brokerId,
  WhiteLabelSiteId: approval.whiteLabelSiteId,
  GeoSite: approval.geoSite,
  IsCFD: approval.isCfd,
  IsDeleted: approval.isDeleted,
});

/** The request's fields (POST body or DELETE query: the same names) as the service takes them. */
const changeOf = (
  connectionType: ConnectionType,
  input: {
    readonly Account: string;
    readonly PersonId?: number | undefined;
    readonly BrokerId?: number | undefined;
    readonly WhiteLabelSiteId?: number | undefined;
    readonly GeoSite?: string | undefined;
    readonly IsCFD?: boolean | undefined;
  },
): ApprovalChange => ({
  connectionType,
  account: input.Account,
  personId: input.PersonId,
  brokerId: input.BrokerId,
  whiteLabelSiteId: input.WhiteLabelSiteId,
  geoSite: input.GeoSite,
  isCfd: input.IsCFD,
});

const WHAT: Readonly<Record<ConnectionTypeName, { path: string; effect: string; cfd: string }>> = {
  Autotrade: {
    path: "ApprovedAutotradeAccount",
    effect:
      "Where the geo-site requires approval, an unapproved live account's setups copy closing orders only; the approval lets them open positions.",
    cfd: "The account may autotrade CFDs (a setup's TradeStocksAsCFD needs it where approval is required)",
  },
  BrokerTransmit: {
    path: "ApprovedBrokerTransmitAccount",
    effect: "Recorded and shown in the person's ApprovedAccounts; the service does not broker-transmit.",
    cfd: "The account may broker-transmit CFDs",
  },
};

function approvalOperations(kind: ConnectionTypeName): Operation[] {
  const connectionType = CONNECTION_TYPES[kind];
  const { path, effect, cfd } = WHAT[kind];
  return [
    defineOperation({
      id: `Add${path}`,
      method: "POST",
      path: `/Autotrade/${path}`,
      servers: ["GEO"],
      summary: `The person's geo-site approves the brokerage account (${kind}); approving it again answers the approval and sets IsCFD when sent. ${effect} Geo-site administrators for their members, service admins.`,
      input: Type.Object({
        Account: AccountNumber(),
        PersonId: Id({ description: "The account holder" }),
        BrokerId: BrokerId(),
        WhiteLabelSiteId,
        GeoSite,
        IsCFD: Type.Optional(Type.Boolean({ description: `Default false: ${cfd}` })),
      }),
      result: ApprovedAccountDTORecord,
      permission: geoAdministrators,
      paginated: false,
      example: {
        Account: EXAMPLE.autotradeAccount,
        PersonId: EXAMPLE.customerId,
        BrokerId: EXAMPLE.brokerId,
        GeoSite: EXAMPLE.geoSite,
        IsCFD: true,
      },
      handler: async (ctx, input) => [dtoOf(await approveAccount(ctx, changeOf(connectionType, input)))],
    }),
    defineOperation({
      id: `Delete${path}`,
      method: "DELETE",
      path: `/Autotrade/${path}`,
      servers: ["GEO"],
      summary: `Deletes the account's live ${kind} approvals on the caller's geo-site (service admins: every geo-site's, or the named one's), narrowed by the other fields, and answers them marked IsDeleted. Geo-site administrators, service admins.`,
      input: Type.Object({
        Account: AccountNumber(),
        PersonId: Type.Optional(Id()),
        BrokerId: Type.Optional(BrokerId()),
        WhiteLabelSiteId,
        GeoSite,
        IsCFD: Type.Optional(Type.Boolean({ description: "Only approvals with this IsCFD" })),
      }),
      result: ApprovedAccountDTORecord,
      permission: geoAdministrators,
      paginated: false,
      example: { Account: EXAMPLE.autotradeAccount, GeoSite: EXAMPLE.geoSite },
      handler: async (ctx, input) => (await deleteApprovals(ctx, changeOf(connectionType, input))).map(dtoOf),
    }),
  ];
}

export const geoApprovalOperations = [...approvalOperations("Autotrade"), ...approvalOperations("BrokerTransmit")];
