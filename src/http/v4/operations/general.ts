import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles, ROLE_NAMES } from "../../../core/access.js";
import { listWhiteLabelSiteMembers } from "../../../services/site-members.js";
import { defineOperation } from "../operation.js";
import { AccessKeyRecord, SiteMemberRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Operations under /General (API.md 4.4). */
export const generalOperations = [
  defineOperation({
    id: "Hello",
    method: "POST",
    path: "/General/Hello",
    servers: ["WL", "GEN", "GEO"],
    summary: "Greets the caller: tests the key, the rate limits and the headers.",
    input: Type.Object({ Name: Type.Optional(Type.String({ description: "Any string" })) }),
    result: Type.String(),
    permission: anyCaller,
    paginated: false,
    handler: async (_ctx, input) => [input.Name === undefined ? "Hello!" : `Hello, ${input.Name}!`],
  }),
  defineOperation({
    id: "GetAccessKey",
    method: "GET",
    path: "/General/GetAccessKey",
    servers: ["WL", "GEN", "GEO"],
    summary: "The caller's key: its owner, role and expiration.",
    input: Type.Object({}),
    result: AccessKeyRecord,
    permission: anyCaller,
    fieldServers: { GeoSiteId: ["GEN"] },
    paginated: false,
    handler: async (ctx) => {
      const { caller } = ctx;
      return [
        {
          Id: caller.keyId,
          AccessKey: ctx.presentedKey,
          PersonId: caller.personId,
          FirstName: caller.firstName,
          LastName: caller.lastName,
          Email: caller.email,
          WhiteLabelSiteId: caller.whiteLabelSiteId,
          GeoSiteId: caller.geoSiteId,
          Role: ROLE_NAMES[caller.role],
          Message: caller.expiresAt
            ? `The key expires at ${caller.expiresAt.toISOString()}`
            : "The key does not expire",
          CreateDate: caller.createdAt,
          DeleteDate: caller.expiresAt,
          Comment: caller.comment,
        },
      ];
    },
  }),
  defineOperation({
    id: "GetWhiteLabelSiteUsers",
    method: "GET",
    path: "/General/GetWhiteLabelSiteUsers",
    servers: ["WL", "GEO"],
    summary:
      "Members of a white-label site. Admins and white-label admins only; the site is the caller's own unless a service admin names one.",
    input: Type.Object({ WhiteLabelSiteId: Type.Optional(Id()) }),
    inputOn: { GEO: Type.Object({ WhiteLabelSiteId: Id() }) },
    result: SiteMemberRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: true,
    handler: async (ctx, input, page) => {
      const result = await listWhiteLabelSiteMembers(ctx, input.WhiteLabelSiteId, page);
      return {
        ...result,
        items: result.items.map((m) => ({
          Id: m.id,
          Alias: m.alias,
          FirstName: m.firstName,
          LastName: m.lastName,
          Email: m.email,
          Phone: m.phone,
          Language: m.language,
          IsWhiteLabelSiteAdmin: m.isWhiteLabelSiteAdmin,
          WhiteLabelSiteId: m.whiteLabelSiteId,
          WhiteLabelPermissions: m.isWhiteLabelSiteAdmin ? "Admin" : "Member",
          CountryCode: m.countryCode,
          DivisionCode: m.divisionCode,
          Created: m.created,
          LastLoggedIn: m.lastLoggedIn,
          LastIP: m.lastIp,
          IsEmailValidated: m.isEmailValidated,
          IsAlive: m.isAlive,
          // Strategies and subscriptions arrive in later issues; until then nobody manages or invests.
          IsManager: false,
          IsInvestor: false,
          GeoSite: m.geoSiteName,
          IsGeoSiteAdmin: m.isGeoSiteAdmin,
        })),
      };
    },
  }),
];
