import { Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { listGeoSites } from "../../../services/geo-sites.js";
import { listGeoSiteMembers, listWhiteLabelSiteMembers, type SiteMember } from "../../../services/site-members.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { GeoSiteMemberRecord, GeoSiteRecord, WhiteLabelSiteMemberRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Site directories under /General: members of a white-label site or a geo-site, and the geo-sites. */
export const siteOperations = [
  defineOperation({
    id: "GetWhiteLabelSiteUsers",
    method: "GET",
    path: "/General/GetWhiteLabelSiteUsers",
    servers: ["WL", "GEO"],
    summary:
      "Members of a white-label site. Admins and white-label admins only; the site is the caller's own unless a service admin names one.",
    input: Type.Object({ WhiteLabelSiteId: Type.Optional(Id()) }),
    inputOn: { GEO: Type.Object({ WhiteLabelSiteId: Id() }) },
    result: WhiteLabelSiteMemberRecord,
    permission: onlyRoles("admin", "whitelabel-admin"),
    paginated: true,
    example: { WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId },
    handler: async (ctx, input, page) => {
      const result = await listWhiteLabelSiteMembers(ctx, input.WhiteLabelSiteId, page);
      return { ...result, items: result.items.map(siteMemberRecord) };
    },
  }),
  defineOperation({
    id: "GetGeoSiteUsers",
    method: "GET",
    path: "/General/GetGeoSiteUsers",
    servers: ["GEO"],
    summary:
      "Members of a geo-site, including the members of its white-label sites. Admins and the geo-site's admins only.",
    input: Type.Object({
      GeoSite: Type.String({ minLength: 1, maxLength: 253, description: "The geo-site's name (GeoSIteId) or domain" }),
    }),
    result: GeoSiteMemberRecord,
    permission: onlyRoles("admin", "geo-admin"),
    paginated: true,
    example: { GeoSite: EXAMPLE.geoSite },
    handler: async (ctx, input, page) => {
      const result = await listGeoSiteMembers(ctx, input.GeoSite, page);
      return { ...result, items: result.items.map(siteMemberRecord) };
    },
  }),
  defineOperation({
    id: "GetGeoSites",
    method: "GET",
    path: "/General/GetGeoSites",
    servers: ["GEO"],
    summary: "Every geo-site.",
    input: Type.Object({}),
    result: GeoSiteRecord,
    permission: anyCaller,
    paginated: false,
    example: {},
    handler: async (ctx) =>
      (await listGeoSites(ctx)).map((site) => ({ Id: site.id, GeoSIteId: site.name, Domain: site.domain })),
  }),
];

function siteMemberRecord(m: SiteMember) {
  return {
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
    IsManager: m.isManager,
    IsInvestor: m.isInvestor,
    GeoSite: m.geoSiteName,
    IsGeoSiteAdmin: m.isGeoSiteAdmin,
  };
}
