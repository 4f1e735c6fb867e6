import { Type } from "@sinclair/typebox";
import { DateTime, Nullable } from "./schemas.js";

/** Result records of the v4 API, named and shaped as in API.md "Records (v4)". */

export const AccessKeyRecord = Type.Object(
  {
    Id: Type.Integer(),
    AccessKey: Type.String(),
    PersonId: Type.Integer(),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    GeoSiteId: Nullable(Type.Integer()),
    Role: Type.String({ description: "ServiceAdmin, WhiteLabelAdmin, GeoSiteAdmin or Person" }),
    Message: Type.String(),
    CreateDate: DateTime(),
    DeleteDate: Nullable(DateTime({ description: "The key's expiration; null when it does not expire" })),
    Comment: Nullable(Type.String()),
  },
  { title: "AccessKey" },
);

export const SiteMemberRecord = Type.Object(
  {
    Id: Type.Integer(),
    Alias: Nullable(Type.String()),
    FirstName: Type.String(),
    LastName: Type.String(),
    Email: Type.String(),
    Phone: Nullable(Type.String()),
    Language: Nullable(Type.String()),
    IsWhiteLabelSiteAdmin: Type.Boolean(),
    WhiteLabelSiteId: Nullable(Type.Integer()),
    WhiteLabelPermissions: Type.String({ description: "Admin for site administrators, Member for customers" }),
    CountryCode: Nullable(Type.String()),
    DivisionCode: Nullable(Type.String()),
    Created: DateTime(),
    LastLoggedIn: Nullable(DateTime()),
    LastIP: Nullable(Type.String()),
    IsEmailValidated: Type.Boolean(),
    IsAlive: Type.Boolean(),
    IsManager: Type.Boolean(),
    IsInvestor: Type.Boolean(),
    GeoSite: Nullable(Type.String()),
    IsGeoSiteAdmin: Type.Boolean(),
  },
  { title: "WhiteLabelSiteMember" },
);

export const ClockRecord = Type.Object({ Now: DateTime() }, { title: "ServiceClock" });
