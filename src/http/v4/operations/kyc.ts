import { Type } from "@sinclair/typebox";
import { onlyRoles } from "../../../core/access.js";
import { LIMITS } from "../../../core/profile.js";
import {
  addKycInfo,
  getKycInfo,
  getKycScore,
  KYC_LIMITS,
  type KycScore,
  SCORE_RANGE,
  updateKycScore,
} from "../../../services/kyc.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { KycInfoRecord, KycScoreRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Identity verification (KYC) under /General, for the administrators of geo-sites and white-label sites. */

const siteAdministrators = onlyRoles("admin", "whitelabel-admin", "geo-admin");
const UserToken = Type.String({ minLength: 1, maxLength: 200, description: "The person's private token" });

export const kycOperations = [
  defineOperation({
    id: "GetKYCScore",
    method: "GET",
    path: "/General/GetKYCScore",
    servers: ["WL", "GEO"],
    summary:
      "A person's KYC score; empty when KYC never started. Geo-sites name the person by UserToken, white-label sites by PersonId.",
    input: Type.Object({ UserToken: Type.Optional(UserToken), PersonId: Type.Optional(Id()) }),
    inputOn: {
      WL: Type.Object({ UserToken: Type.Optional(UserToken), PersonId: Id() }),
      GEO: Type.Object({ UserToken, PersonId: Type.Optional(Id()) }),
    },
    result: KycScoreRecord,
    permission: siteAdministrators,
    paginated: false,
    // Both names: white-label sites read PersonId, geo-sites UserToken.
    example: { PersonId: EXAMPLE.customerId, UserToken: EXAMPLE.userToken },
    handler: async (ctx, input) =>
      (await getKycScore(ctx, { userToken: input.UserToken, personId: input.PersonId })).map(kycScoreRecord),
  }),
  defineOperation({
    id: "UpdateKYCScore",
    method: "PUT",
    path: "/General/UpdateKYCScore",
    servers: ["WL", "GEO"],
    summary: "Records the KYC verdict: finished, approved and the score. True stamps the time once; false clears it.",
    input: Type.Object({
      UserToken,
      IsFinished: Type.Optional(Type.Boolean()),
      IsApproved: Type.Optional(Type.Boolean()),
      Score: Type.Optional(Type.Integer({ minimum: SCORE_RANGE.min, maximum: SCORE_RANGE.max })),
    }),
    result: KycScoreRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { UserToken: EXAMPLE.userToken, IsFinished: true, IsApproved: true, Score: 87 },
    handler: async (ctx, input) =>
      (
        await updateKycScore(ctx, {
          userToken: input.UserToken,
          isFinished: input.IsFinished,
          isApproved: input.IsApproved,
          score: input.Score,
        })
      ).map(kycScoreRecord),
  }),
  defineOperation({
    id: "GetKYCInfo",
    method: "GET",
    path: "/General/GetKYCInfo",
    servers: ["WL", "GEO"],
    summary: "The identity data last submitted for the person; empty when none was.",
    input: Type.Object({ UserToken }),
    result: KycInfoRecord,
    permission: siteAdministrators,
    paginated: false,
    example: { UserToken: EXAMPLE.userToken },
    handler: async (ctx, input) =>
      (await getKycInfo(ctx, input.UserToken)).map((info) => ({
        Id: info.id,
        PersonId: info.personId,
        FirstName: info.firstName,
        LastName: info.lastName,
        Email: info.email,
        Phone: info.phone,
        IsPhoneVerified: info.isPhoneVerified,
        Street: info.street,
        City: info.city,
        Province: info.province,
        PostCode: info.postCode,
        Country: info.country,
        PhotoId1: info.photoId1,
        PhotoId1Title: info.photoId1Title,
        PhotoId2: info.photoId2,
        PhotoId2Title: info.photoId2Title,
        WhiteLabelSiteId: info.whiteLabelSiteId,
        GeoSite: info.geoSiteName,
        SiteURL: info.siteUrl,
      })),
  }),
  defineOperation({
    id: "AddKYCInfo",
    method: "POST",
    path: "/General/AddKYCInfo",
    servers: ["WL", "GEO"],
    summary:
      "Replaces the person's identity data with this submission. PhotoId1/PhotoId2 reference documents held by the site's KYC provider; the service never stores images.",
    input: Type.Object({
      UserToken,
      FirstName: Type.String({ maxLength: LIMITS.name.max }),
      LastName: Type.String({ maxLength: LIMITS.name.max }),
      Email: Type.String({ maxLength: LIMITS.email, description: "May differ from the service email" }),
      Phone: Type.String({ maxLength: 16, description: "International form, e.g. +14155552671" }),
      IsPhoneVerified: Type.Boolean(),
      Street: Type.String({ maxLength: KYC_LIMITS.street }),
      City: Type.String({ maxLength: KYC_LIMITS.city }),
      Province: Type.String({ maxLength: KYC_LIMITS.province }),
      PostCode: Type.String({ maxLength: KYC_LIMITS.postCode }),
      Country: Type.String({ maxLength: 2, description: "ISO 3166-1 alpha-2" }),
      PhotoId1: Type.Optional(Type.String({ maxLength: KYC_LIMITS.photoId })),
      PhotoId1Title: Type.Optional(Type.String({ maxLength: KYC_LIMITS.photoTitle })),
      PhotoId2: Type.Optional(Type.String({ maxLength: KYC_LIMITS.photoId })),
      PhotoId2Title: Type.Optional(Type.String({ maxLength: KYC_LIMITS.photoTitle })),
    }),
    result: KycScoreRecord,
    permission: siteAdministrators,
    paginated: false,
    example: {
      UserToken: EXAMPLE.userToken,
      FirstName: "Ben",
      LastName: "Ortiz",
      Email: "ben.ortiz@example.com",
      Phone: "+14155550123",
      IsPhoneVerified: true,
      Street: "1 Market St",
      City: "San Francisco",
      Province: "CA",
      PostCode: "94105",
      Country: "US",
      PhotoId1: "provider-doc-58213",
      PhotoId1Title: "Passport",
    },
    handler: async (ctx, input) =>
      (
        await addKycInfo(ctx, {
          userToken: input.UserToken,
          firstName: input.FirstName,
          lastName: input.LastName,
          email: input.Email,
          phone: input.Phone,
          isPhoneVerified: input.IsPhoneVerified,
          street: input.Street,
          city: input.City,
          province: input.Province,
          postCode: input.PostCode,
          country: input.Country,
          photoId1: input.PhotoId1,
          photoId1Title: input.PhotoId1Title,
          photoId2: input.PhotoId2,
          photoId2Title: input.PhotoId2Title,
        })
      ).map(kycScoreRecord),
  }),
];

function kycScoreRecord(score: KycScore) {
  return {
    Id: score.id,
    PersonId: score.personId,
    Created: score.created,
    Approved: score.approved,
    Started: score.started,
    Finished: score.finished,
    RedirectedToKYCTimes: score.redirectedToKycTimes,
    Score: score.score,
  };
}
