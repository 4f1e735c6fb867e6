import { type TSchema, Type } from "@sinclair/typebox";
import { anyCaller, onlyRoles } from "../../../core/access.js";
import { LIMITS } from "../../../core/profile.js";
import type { PersonView } from "../../../services/person-view.js";
import { verifiedPhoneExists } from "../../../services/phones.js";
import { searchProfiles } from "../../../services/profile-search.js";
import { addProfile, getProfile, IMMUTABLE_PROFILE_FIELDS, updateProfile } from "../../../services/profiles.js";
import { EXAMPLE } from "../examples.js";
import { defineOperation } from "../operation.js";
import { AddPersonResponseRecord, PersonRecord } from "../records.js";
import { Id } from "../schemas.js";

/** Profiles under /General: sign-up, changes, reading and searching people. */

const text = (max: number, description?: string) =>
  Type.String({ maxLength: max, ...(description ? { description } : {}) });
const optionalText = (max: number, description?: string) => Type.Optional(text(max, description));

const administrators = onlyRoles("admin", "whitelabel-admin", "geo-admin");

const UpdateProfileInput = Type.Object({
  PersonId: Type.Optional(Id({ description: "The person to change; the caller when omitted" })),
  FirstName: optionalText(LIMITS.name.max),
  LastName: optionalText(LIMITS.name.max),
  Phone: optionalText(16, "International form, e.g. +14155552671; a new number is unverified"),
  IsClearPhone: Type.Optional(Type.Boolean({ description: "Removes the phone and its verification" })),
  CountryCode: optionalText(2, "ISO 3166-1 alpha-2"),
  Street: optionalText(LIMITS.street, "Empty clears"),
  Street2: optionalText(LIMITS.street, "Empty clears"),
  City: optionalText(LIMITS.city, "Empty clears"),
  DivisionCode: optionalText(LIMITS.divisionCode, "ISO 3166-2 subdivision of the country; empty clears"),
  ZipCode: optionalText(LIMITS.zipCode, "Empty clears"),
  // Named so that a request carrying them is refused instead of silently ignored.
  ...Object.fromEntries(
    IMMUTABLE_PROFILE_FIELDS.map((field): [string, TSchema] => [
      field,
      Type.Optional(Type.Unknown({ description: "Cannot be changed: refused" })),
    ]),
  ),
});

export const profileOperations = [
  defineOperation({
    id: "AddProfile",
    method: "POST",
    path: "/General/AddProfile",
    servers: ["WL", "GEO"],
    summary:
      "Signs up a customer on a site the caller administers (the caller's own site unless WhiteLabelSiteId or GeoSite names another).",
    input: Type.Object({
      FirstName: text(LIMITS.name.max),
      LastName: text(LIMITS.name.max),
      ScreenName: text(LIMITS.screenName.max, "Public name, unique regardless of case"),
      Email: text(LIMITS.email, "Becomes the login; unique regardless of case"),
      Password: text(LIMITS.password.max, `${LIMITS.password.min} to ${LIMITS.password.max} characters`),
      Language: text(3, "ISO 639-3, e.g. eng"),
      CountryCode: text(2, "ISO 3166-1 alpha-2, e.g. US"),
      DivisionCode: optionalText(
        LIMITS.divisionCode,
        "ISO 3166-2 subdivision of the country (US-CA or CA); required where the country has subdivisions",
      ),
      City: optionalText(LIMITS.city),
      Street: optionalText(LIMITS.street),
      Street2: optionalText(LIMITS.street),
      ZipCode: optionalText(LIMITS.zipCode),
      Phone: optionalText(16, "International form, e.g. +14155552671"),
      Company: optionalText(LIMITS.company),
      WhiteLabelSiteId: Type.Optional(Id()),
      GeoSite: optionalText(253, "The geo-site's name or domain"),
      // No length limit here: ignored without WhiteLabelSiteId, checked as an address with it.
      IPAddress: Type.Optional(
        Type.String({ description: "The customer's address; required with WhiteLabelSiteId, otherwise ignored" }),
      ),
    }),
    result: AddPersonResponseRecord,
    permission: administrators,
    paginated: false,
    example: {
      FirstName: "Jane",
      LastName: "Doe",
      ScreenName: "JaneTrades",
      Email: "jane.doe@example.com",
      Password: "correct-horse-battery",
      Language: "eng",
      CountryCode: "US",
      DivisionCode: "US-CA",
      City: "San Francisco",
      Phone: "+14155552671",
      WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId,
      IPAddress: "203.0.113.7",
    },
    handler: async (ctx, input) => {
      const added = await addProfile(ctx, {
        firstName: input.FirstName,
        lastName: input.LastName,
        screenName: input.ScreenName,
        email: input.Email,
        password: input.Password,
        language: input.Language,
        countryCode: input.CountryCode,
        divisionCode: input.DivisionCode,
        city: input.City,
        street: input.Street,
        street2: input.Street2,
        zipCode: input.ZipCode,
        phone: input.Phone,
        company: input.Company,
        whiteLabelSiteId: input.WhiteLabelSiteId,
        geoSite: input.GeoSite,
        ipAddress: input.IPAddress,
      });
      return [{ PersonId: added.personId, CSRF: added.csrf, UserToken: added.userToken }];
    },
  }),
  defineOperation({
    id: "UpdateProfile",
    method: "PUT",
    path: "/General/UpdateProfile",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "Changes names, phone, country and address of the caller or of a customer of a site the caller administers. Not available on WL and GEO (501).",
    input: UpdateProfileInput,
    inputOn: { GEO: Type.Object({ PersonId: Type.Optional(Id()) }) },
    result: AddPersonResponseRecord,
    permission: anyCaller,
    notAvailableOn: ["WL", "GEO"],
    paginated: false,
    example: { PersonId: EXAMPLE.customerId, City: "Oakland", ZipCode: "94607" },
    handler: async (ctx, input) => {
      const { personId } = await updateProfile(ctx, {
        personId: input.PersonId,
        firstName: input.FirstName,
        lastName: input.LastName,
        phone: input.Phone,
        isClearPhone: input.IsClearPhone,
        countryCode: input.CountryCode,
        street: input.Street,
        street2: input.Street2,
        city: input.City,
        divisionCode: input.DivisionCode,
        zipCode: input.ZipCode,
        immutable: IMMUTABLE_PROFILE_FIELDS.filter((field) => (input as Record<string, unknown>)[field] !== undefined),
      });
      return [{ PersonId: personId, CSRF: null, UserToken: null }];
    },
  }),
  defineOperation({
    id: "GetProfile",
    method: "GET",
    path: "/General/GetProfile",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "A person's profile (the caller's when PersonId is omitted): public fields for everyone, private ones for the person and their administrators.",
    input: Type.Object({
      PersonId: Type.Optional(Id()),
      IncludeIconInResponse: Type.Optional(Type.Boolean()),
    }),
    result: PersonRecord,
    permission: anyCaller,
    fieldServers: { Icon: ["GEN", "GEO"] },
    paginated: false,
    example: { PersonId: EXAMPLE.customerId },
    handler: async (ctx, input) => {
      const includeIcon = input.IncludeIconInResponse === true;
      return [personRecord(await getProfile(ctx, input.PersonId, includeIcon))];
    },
  }),
  defineOperation({
    id: "SearchProfiles",
    method: "GET",
    path: "/General/SearchProfiles",
    servers: ["WL", "GEN", "GEO"],
    summary:
      "People matching every given filter (text filters match any part, without regard to case). Service admins search everyone, geo-site admins their geo-site with its white-label sites, white-label admins their own site.",
    input: Type.Object({
      PersonId: Type.Optional(Id()),
      FirstName: optionalText(LIMITS.name.max),
      LastName: optionalText(LIMITS.name.max),
      Email: optionalText(LIMITS.email),
      WhiteLabelSiteId: Type.Optional(Id()),
      CountryCode: optionalText(2),
      DivisionCode: optionalText(LIMITS.divisionCode),
      IPAddress: optionalText(45),
      Phone: optionalText(16, "Matches verified numbers only"),
      IsAlive: Type.Optional(Type.Boolean()),
      IncludeIconInResponse: Type.Optional(Type.Boolean()),
      IsEmailValidated: Type.Optional(Type.Boolean()),
    }),
    result: PersonRecord,
    permission: administrators,
    fieldServers: { Icon: ["GEN", "GEO"] },
    paginated: true,
    example: { LastName: "Ortiz", WhiteLabelSiteId: EXAMPLE.whiteLabelSiteId, IsAlive: true },
    handler: async (ctx, input, page) => {
      const { IncludeIconInResponse, ...filters } = input;
      const includeIcon = IncludeIconInResponse === true;
      const result = await searchProfiles(
        ctx,
        {
          personId: filters.PersonId,
          firstName: filters.FirstName,
          lastName: filters.LastName,
          email: filters.Email,
          whiteLabelSiteId: filters.WhiteLabelSiteId,
          countryCode: filters.CountryCode,
          divisionCode: filters.DivisionCode,
          ipAddress: filters.IPAddress,
          phone: filters.Phone,
          isAlive: filters.IsAlive,
          isEmailValidated: filters.IsEmailValidated,
        },
        includeIcon,
        page,
      );
      return { ...result, items: result.items.map(personRecord) };
    },
  }),
  defineOperation({
    id: "GetPhoneAlreadyExists",
    method: "GET",
    path: "/General/GetPhoneAlreadyExists",
    servers: ["WL", "GEO"],
    summary: "Whether a verified phone number is already held by someone. Administrators only.",
    input: Type.Object({
      Phone: Type.String({
        maxLength: 16,
        description: "Full international format: +, country code, no zero after it",
      }),
    }),
    result: Type.Boolean(),
    permission: administrators,
    paginated: false,
    example: { Phone: "+14155552671" },
    handler: async (ctx, input) => [await verifiedPhoneExists(ctx, input.Phone)],
  }),
];

function personRecord(view: PersonView) {
  const p = view.private;
  return {
    Id: view.id,
    Alias: view.alias,
    FirstName: p?.firstName ?? null,
    LastName: p?.lastName ?? null,
    Email: p?.email ?? null,
    Phone: p?.phone ?? null,
    IsPhoneVerified: p?.isPhoneVerified ?? null,
    Language: p?.language ?? null,
    WhiteLabelSiteId: p?.whiteLabelSiteId ?? null,
    CountryCode: p?.countryCode ?? null,
    DivisionCode: p?.divisionCode ?? null,
    Created: view.created,
    LastLoggedIn: p?.lastLoggedIn ?? null,
    LastIP: p?.lastIp ?? null,
    IsEmailValidated: p?.isEmailValidated ?? null,
    IsAlive: view.isAlive,
    // The geo-sites' approvals of the person's brokerage accounts; private like the rest.
    ApprovedAccounts: p
      ? p.approvedAccounts.map((approval) => ({
          PersonId: approval.personId,
          AddedDate: new Date(approval.addedAt),
          Account: approval.account,
          BrokerId: approval.brokerId,
          ConnectionType: approval.connectionType,
          AddedByPersonId: approval.addedByPersonId,
        }))
      : null,
    IsManager: view.isManager,
    IsInvestor: view.isInvestor,
    GeoSite: p?.geoSiteName ?? null,
    IsGeoSiteAdmin: p?.isGeoSiteAdmin ?? null,
    SupportCompanyName: p?.supportCompanyName ?? null,
    SupportSiteURL: p?.supportSiteUrl ?? null,
    SupportEmail: p?.supportEmail ?? null,
    UserToken: p?.userToken ?? null,
    ...(view.icon === null ? {} : { Icon: view.icon }),
  };
}
