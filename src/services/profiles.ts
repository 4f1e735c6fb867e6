import { createHash, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { administers, type Caller, membership } from "../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import {
  checkCountry,
  checkDivision,
  checkEmail,
  checkLanguage,
  checkName,
  checkPassword,
  checkPhone,
  checkScreenName,
  checkText,
  LIMITS,
} from "../core/profile.js";
import { fold } from "../core/search.js";
import { uniqueViolation } from "../store/constraint.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { approvedAccountsOf } from "./geo-approvals.js";
import { changingKeys } from "./key-cache.js";
import { hashPassword } from "./passwords.js";
import { newUserToken } from "./people.js";
import { withPersonRoles } from "./person-roles.js";
import { memberOf, type PersonView, personsWithSites, viewPerson } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";
import { findGeoSite, findSite } from "./sites-lookup.js";

/** Collects field errors so that one answer names every faulty field. */
class FieldErrors {
  readonly entries: ErrorEntry[] = [];
  take<T>(check: { ok: true; value: T } | { ok: false; error: ErrorEntry }): T | undefined {
    if (check.ok) return check.value;
    this.entries.push(check.error);
    return undefined;
  }
  missing(field: string): void {
    this.entries.push({ name: "MissingValue", field, message: `${field} is required` });
  }
  throwIfAny(): void {
    if (this.entries.length > 0) throw new Refusal(this.entries);
  }
}

export interface NewProfile {
  readonly firstName: string;
  readonly lastName: string;
  readonly screenName: string;
  readonly email: string;
  readonly password: string;
  readonly language: string;
  readonly countryCode: string;
  readonly divisionCode?: string | undefined;
  readonly city?: string | undefined;
  readonly street?: string | undefined;
  readonly street2?: string | undefined;
  readonly zipCode?: string | undefined;
  readonly phone?: string | undefined;
  readonly company?: string | undefined;
  readonly whiteLabelSiteId?: number | undefined;
  readonly geoSite?: string | undefined;
  readonly ipAddress?: string | undefined;
}

export interface AddedProfile {
  readonly personId: number;
  /** Anti-forgery token for the site's sign-in hand-off; only its hash is kept. */
  readonly csrf: string;
  /** The private token KYC operations name this person by. */
  readonly userToken: string;
}

/**
 * Creates a customer on a site. The site is the one named (WhiteLabelSiteId or
 * GeoSite) if the caller administers it, otherwise the caller's own.
 */
export async function addProfile(ctx: RequestContext, input: NewProfile): Promise<AddedProfile> {
  const errors = new FieldErrors();
  const firstName = errors.take(checkName("FirstName", input.firstName));
  const lastName = errors.take(checkName("LastName", input.lastName));
  const screenName = errors.take(checkScreenName(input.screenName));
  const email = errors.take(checkEmail(input.email));
  const password = errors.take(checkPassword(input.password));
  const language = errors.take(checkLanguage(input.language));
  const country = errors.take(checkCountry(input.countryCode));
  const division = country === undefined ? undefined : errors.take(checkDivision(country, input.divisionCode));
  const city = optionalText(errors, "City", input.city, LIMITS.city);
  const street = optionalText(errors, "Street", input.street, LIMITS.street);
  const street2 = optionalText(errors, "Street2", input.street2, LIMITS.street);
  const zipCode = optionalText(errors, "ZipCode", input.zipCode, LIMITS.zipCode);
  const company = optionalText(errors, "Company", input.company, LIMITS.company);
  const phone = input.phone === undefined || input.phone === "" ? null : (errors.take(checkPhone(input.phone)) ?? null);
  if (input.whiteLabelSiteId !== undefined && (input.ipAddress === undefined || input.ipAddress === "")) {
    errors.missing("IPAddress");
  } else if (input.whiteLabelSiteId !== undefined && isIP(input.ipAddress ?? "") === 0) {
    errors.entries.push({ name: "InvalidValue", field: "IPAddress", message: `Not an IP address: ${input.ipAddress}` });
  }
  errors.throwIfAny();

  // Hashing takes tens of milliseconds: done before the transaction, never inside it.
  const passwordHash = await hashPassword(password as string);
  const csrf = randomBytes(24).toString("base64url");
  const userToken = newUserToken();
  try {
    return await withTransaction(ctx, async ({ tx }) => {
      const site = await signupSite(tx, ctx.caller, input.whiteLabelSiteId, input.geoSite);
      const taken = await tx
        .selectFrom("persons")
        .select("id")
        .where("email", "=", email as string)
        .executeTakeFirst();
      if (taken) throw refuse("AlreadyExists", { field: "Email", message: "That email is already registered" });
      const aliasKey = fold(screenName as string);
      const aliasTaken = await tx
        .selectFrom("persons")
        .select("id")
        .where("alias_key", "=", aliasKey)
        .executeTakeFirst();
      if (aliasTaken) throw refuse("AlreadyExists", { field: "ScreenName", message: "That screen name is taken" });
      const ip = input.whiteLabelSiteId !== undefined ? (input.ipAddress ?? null) : null;
      const row = await tx
        .insertInto("persons")
        .values({
          email: email as string,
          first_name: firstName as string,
          last_name: lastName as string,
          first_name_folded: fold(firstName as string),
          last_name_folded: fold(lastName as string),
          role: "person",
          white_label_site_id: site.whiteLabelSiteId,
          geo_site_id: site.geoSiteId,
          alias: screenName as string,
          alias_key: aliasKey,
          password_hash: passwordHash,
          phone,
          is_phone_verified: 0,
          language: language as string,
          country_code: country as string,
          division_code: division ?? null,
          city,
          street,
          street2,
          zip_code: zipCode,
          company,
          signup_ip: ip,
          last_ip: ip,
          user_token: userToken,
          csrf_hash: createHash("sha256").update(csrf).digest("hex"),
          created_at: ctx.clock.nowMs(),
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      return { personId: row.id, csrf, userToken };
    });
  } catch (error) {
    throw conflictOf(error) ?? error;
  }
}

/** A unique index the insert ran into, as the 409 the earlier checks would have given. */
export function conflictOf(error: unknown): Refusal | null {
  const index = uniqueViolation(error);
  if (index === null) return null;
  if (index.includes("email"))
    return refuse("AlreadyExists", { field: "Email", message: "That email is already registered" });
  if (index.includes("alias"))
    return refuse("AlreadyExists", { field: "ScreenName", message: "That screen name is taken" });
  return null;
}

function optionalText(errors: FieldErrors, field: string, value: string | undefined, max: number): string | null {
  if (value === undefined) return null;
  const text = errors.take(checkText(field, value, max));
  return text === undefined || text === "" ? null : text;
}

/** The site a new customer joins, checked against what the caller administers. */
async function signupSite(
  tx: Tx,
  caller: Caller,
  whiteLabelSiteId: number | undefined,
  geoSite: string | undefined,
): Promise<{ whiteLabelSiteId: number | null; geoSiteId: number | null }> {
  const geo = geoSite === undefined || geoSite === "" ? undefined : await findGeoSite(tx, geoSite);
  if (geoSite !== undefined && geoSite !== "" && !geo) {
    throw refuse("NotFound", { field: "GeoSite", message: `No geo-site ${geoSite}` });
  }
  if (whiteLabelSiteId !== undefined) {
    const site = await findSite(tx, whiteLabelSiteId);
    if (site?.kind !== "whitelabel") {
      throw refuse("NotFound", { field: "WhiteLabelSiteId", message: `No white-label site ${whiteLabelSiteId}` });
    }
    if (geo && site.geo_site_id !== geo.id) {
      throw refuse("InvalidValue", {
        field: "GeoSite",
        message: `White-label site ${site.id} is not part of ${geoSite}`,
      });
    }
    if (!administers(caller, membership(site.id, site.geo_site_id))) {
      throw refuse("Forbidden", { field: "WhiteLabelSiteId", message: "Not an administrator of that site" });
    }
    return { whiteLabelSiteId: site.id, geoSiteId: null };
  }
  if (geo) {
    if (!administers(caller, membership(null, geo.id)))
      throw refuse("Forbidden", { field: "GeoSite", message: "Not an administrator of that geo-site" });
    return { whiteLabelSiteId: null, geoSiteId: geo.id };
  }
  switch (caller.role) {
    case "whitelabel-admin":
      return { whiteLabelSiteId: caller.whiteLabelSiteId, geoSiteId: null };
    case "geo-admin":
      return { whiteLabelSiteId: null, geoSiteId: caller.geoSiteId };
    default:
      return { whiteLabelSiteId: null, geoSiteId: null };
  }
}

/** Fields of a profile that UpdateProfile never changes; naming one is refused, not ignored. */
export const IMMUTABLE_PROFILE_FIELDS = [
  "Email",
  "Password",
  "ScreenName",
  "Alias",
  "Language",
  "WhiteLabelSiteId",
  "GeoSite",
  "ApprovedAccounts",
  "Account",
  "BrokerId",
  "AutotradeSettings",
] as const;

export interface ProfileChanges {
  readonly personId?: number | undefined;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly phone?: string | undefined;
  readonly isClearPhone?: boolean | undefined;
  readonly countryCode?: string | undefined;
  readonly street?: string | undefined;
  readonly street2?: string | undefined;
  readonly city?: string | undefined;
  readonly divisionCode?: string | undefined;
  readonly zipCode?: string | undefined;
  /** Names of immutable fields the request carried. */
  readonly immutable?: readonly string[] | undefined;
}

/**
 * Changes a profile: the person's own, or a customer of a site the caller
 * administers. Omitted fields keep their values; an empty string clears the
 * address fields.
 */
export async function updateProfile(
  ctx: RequestContext,
  changes: ProfileChanges,
): Promise<{ readonly personId: number }> {
  const errors = new FieldErrors();
  for (const field of changes.immutable ?? []) {
    errors.entries.push({ name: "InvalidValue", field, message: `${field} cannot be changed with UpdateProfile` });
  }
  const firstName =
    changes.firstName === undefined ? undefined : errors.take(checkName("FirstName", changes.firstName));
  const lastName = changes.lastName === undefined ? undefined : errors.take(checkName("LastName", changes.lastName));
  if (changes.isClearPhone === true && changes.phone !== undefined) {
    errors.entries.push({
      name: "InvalidValue",
      field: "IsClearPhone",
      message: "IsClearPhone cannot be combined with Phone",
    });
  }
  const phone = changes.phone === undefined ? undefined : errors.take(checkPhone(changes.phone));
  const country = changes.countryCode === undefined ? undefined : errors.take(checkCountry(changes.countryCode));
  const street =
    changes.street === undefined ? undefined : optionalText(errors, "Street", changes.street, LIMITS.street);
  const street2 =
    changes.street2 === undefined ? undefined : optionalText(errors, "Street2", changes.street2, LIMITS.street);
  const city = changes.city === undefined ? undefined : optionalText(errors, "City", changes.city, LIMITS.city);
  const zipCode =
    changes.zipCode === undefined ? undefined : optionalText(errors, "ZipCode", changes.zipCode, LIMITS.zipCode);
  if (changes.divisionCode !== undefined && changes.divisionCode.length > LIMITS.divisionCode) {
    errors.entries.push({
      name: "InvalidValue",
      field: "DivisionCode",
      message: `DivisionCode must be at most ${LIMITS.divisionCode} characters`,
    });
  }
  errors.throwIfAny();

  const personId = changes.personId ?? ctx.caller.personId;
  // The person's name is part of what their keys authenticate as (GetAccessKey reports it).
  const inTransaction = firstName !== undefined || lastName !== undefined ? changingKeys : withTransaction;
  return inTransaction(ctx, async ({ tx }) => {
    const row = await personsWithSites(tx).where("p.id", "=", personId).executeTakeFirst();
    if (!row) throw refuse("NotFound", { field: "PersonId", message: `No person ${personId}` });
    const member = memberOf(row);
    if (ctx.caller.personId !== member.personId && !administers(ctx.caller, member)) {
      throw refuse("Forbidden", {
        field: "PersonId",
        message: "Only the person or an administrator of their site may change the profile",
      });
    }
    const newCountry = country ?? row.country_code;
    // undefined: unchanged; null: cleared.
    let division: string | null | undefined;
    if (changes.divisionCode !== undefined && changes.divisionCode.trim() === "") {
      division = null;
    } else if (changes.divisionCode !== undefined) {
      if (newCountry === null) {
        errors.entries.push({
          name: "InvalidValue",
          field: "DivisionCode",
          message: "Set CountryCode with DivisionCode",
        });
      } else {
        division = errors.take(checkDivision(newCountry, changes.divisionCode));
      }
    } else if (country !== undefined && row.division_code !== null && !row.division_code.startsWith(`${country}-`)) {
      errors.entries.push({
        name: "InvalidValue",
        field: "DivisionCode",
        message: `DivisionCode ${row.division_code} is not a subdivision of ${country}: send a new DivisionCode (or an empty one) with CountryCode`,
      });
    }
    errors.throwIfAny();

    const phoneChange =
      changes.isClearPhone === true
        ? { phone: null, is_phone_verified: 0 }
        : phone !== undefined && phone !== row.phone
          ? { phone, is_phone_verified: 0 }
          : {};
    const update = {
      ...(firstName !== undefined ? { first_name: firstName, first_name_folded: fold(firstName) } : {}),
      ...(lastName !== undefined ? { last_name: lastName, last_name_folded: fold(lastName) } : {}),
      ...phoneChange,
      ...(country !== undefined ? { country_code: country } : {}),
      ...(division !== undefined ? { division_code: division } : {}),
      ...(street !== undefined ? { street } : {}),
      ...(street2 !== undefined ? { street2 } : {}),
      ...(city !== undefined ? { city } : {}),
      ...(zipCode !== undefined ? { zip_code: zipCode } : {}),
    };
    // A request that changes nothing is a success that writes nothing.
    if (Object.keys(update).length > 0) {
      await tx.updateTable("persons").set(update).where("id", "=", personId).execute();
    }
    return { personId };
  });
}

/** A person's profile: public to all, private to the person and their administrators. */
export async function getProfile(
  ctx: RequestContext,
  personId: number | undefined,
  includeIcon: boolean,
): Promise<PersonView> {
  const id = personId ?? ctx.caller.personId;
  const row = await withPersonRoles(personsWithSites(dbOf(ctx)), ctx.clock.nowMs())
    .where("p.id", "=", id)
    .executeTakeFirst();
  if (!row) throw refuse("NotFound", { field: "PersonId", message: `No person ${id}` });
  return viewPerson(ctx.caller, row, includeIcon, await approvedAccountsOf(dbOf(ctx), [row.id]));
}
