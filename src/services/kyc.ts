import { administers } from "../core/access.js";
import { type ErrorEntry, Refusal, refuse } from "../core/errors.js";
import { checkCountry, checkEmail, checkName, checkPhone, checkText } from "../core/profile.js";
import { type Tx, withTransaction } from "../store/transaction.js";
import { memberOf, type PersonRow, personsWithSites } from "./person-view.js";
import { dbOf, type RequestContext } from "./runtime.js";

/**
 * Identity verification (KYC) records kept for geo-sites and white-label
 * sites. A person is named by the private UserToken the service issued at
 * sign-up (white-label sites may name them by PersonId when reading the
 * score). Only administrators of the person's sites may touch the records.
 */

export interface KycPersonRef {
  readonly userToken?: string | undefined;
  readonly personId?: number | undefined;
}

export interface KycScore {
  readonly id: number;
  readonly personId: number;
  readonly created: Date;
  readonly approved: Date | null;
  readonly started: Date | null;
  readonly finished: Date | null;
  readonly redirectedToKycTimes: number;
  readonly score: number | null;
}

export interface KycInfo {
  readonly id: number;
  readonly personId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string;
  readonly isPhoneVerified: boolean;
  readonly street: string;
  readonly city: string;
  readonly province: string;
  readonly postCode: string;
  readonly country: string;
  readonly photoId1: string | null;
  readonly photoId1Title: string | null;
  readonly photoId2: string | null;
  readonly photoId2Title: string | null;
  readonly whiteLabelSiteId: number | null;
  readonly geoSiteName: string | null;
  readonly siteUrl: string | null;
}

export const SCORE_RANGE = { min: 0, max: 100 } as const;

/** The person a KYC request names, if the caller administers them. */
async function kycPerson(tx: Tx, ctx: RequestContext, ref: KycPersonRef): Promise<PersonRow> {
  let query = personsWithSites(tx);
  if (ref.userToken !== undefined) query = query.where("p.user_token", "=", ref.userToken);
  else if (ref.personId !== undefined) query = query.where("p.id", "=", ref.personId);
  else throw refuse("MissingValue", { field: "UserToken", message: "UserToken is required" });
  const row = await query.executeTakeFirst();
  const field = ref.userToken !== undefined ? "UserToken" : "PersonId";
  if (!row) throw refuse("NotFound", { field, message: `No person with that ${field}` });
  if (ref.userToken !== undefined && ref.personId !== undefined && row.id !== ref.personId) {
    throw refuse("InvalidValue", { field: "PersonId", message: "PersonId and UserToken name different people" });
  }
  // Service admins, and the admins of the person's white-label site or geo-site.
  if (!administers(ctx.caller, memberOf(row))) {
    throw refuse("Forbidden", { field, message: "Not an administrator of this person's site" });
  }
  return row;
}

async function scoreOf(tx: Tx, personId: number): Promise<KycScore | null> {
  const row = await tx.selectFrom("kyc_scores").selectAll().where("person_id", "=", personId).executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    personId: row.person_id,
    created: new Date(row.created_at),
    approved: row.approved_at === null ? null : new Date(row.approved_at),
    started: row.started_at === null ? null : new Date(row.started_at),
    finished: row.finished_at === null ? null : new Date(row.finished_at),
    redirectedToKycTimes: row.redirected_times,
    score: row.score,
  };
}

/** The person's KYC score, or nothing when KYC never started. */
export async function getKycScore(ctx: RequestContext, ref: KycPersonRef): Promise<KycScore[]> {
  const db = dbOf(ctx);
  const person = await kycPerson(db, ctx, ref);
  const score = await scoreOf(db, person.id);
  return score ? [score] : [];
}

export interface KycScoreChange extends KycPersonRef {
  readonly isFinished?: boolean | undefined;
  readonly isApproved?: boolean | undefined;
  readonly score?: number | undefined;
}

/**
 * Records the KYC provider's verdict: finished (or reopened), approved (or
 * withdrawn) and the score. Setting a flag true stamps the time once; false
 * clears it.
 */
export async function updateKycScore(ctx: RequestContext, change: KycScoreChange): Promise<KycScore[]> {
  return withTransaction(ctx, async ({ tx }) => {
    const person = await kycPerson(tx, ctx, change);
    const now = ctx.clock.nowMs();
    await ensureScore(tx, person.id, now);
    const current = await tx
      .selectFrom("kyc_scores")
      .selectAll()
      .where("person_id", "=", person.id)
      .executeTakeFirstOrThrow();
    const update = {
      ...(change.isFinished === undefined
        ? {}
        : { finished_at: change.isFinished ? (current.finished_at ?? now) : null }),
      ...(change.isApproved === undefined
        ? {}
        : { approved_at: change.isApproved ? (current.approved_at ?? now) : null }),
      ...(change.score === undefined ? {} : { score: change.score }),
    };
    // Naming only the person starts the record and changes nothing else.
    if (Object.keys(update).length > 0) {
      await tx.updateTable("kyc_scores").set(update).where("person_id", "=", person.id).execute();
    }
    return [(await scoreOf(tx, person.id)) as KycScore];
  });
}

async function ensureScore(tx: Tx, personId: number, now: number): Promise<void> {
  await tx
    .insertInto("kyc_scores")
    .values({ person_id: personId, created_at: now, started_at: now })
    .onConflict((oc) => oc.column("person_id").doNothing())
    .execute();
  await tx
    .updateTable("kyc_scores")
    .set({ started_at: now })
    .where("person_id", "=", personId)
    .where("started_at", "is", null)
    .execute();
}

/** The identity data last submitted for the person, or nothing. */
export async function getKycInfo(ctx: RequestContext, userToken: string): Promise<KycInfo[]> {
  const db = dbOf(ctx);
  const person = await kycPerson(db, ctx, { userToken });
  const row = await db.selectFrom("kyc_infos").selectAll().where("person_id", "=", person.id).executeTakeFirst();
  if (!row) return [];
  return [
    {
      id: row.id,
      personId: row.person_id,
      firstName: row.first_name,
      lastName: row.last_name,
      email: row.email,
      phone: row.phone,
      isPhoneVerified: row.is_phone_verified === 1,
      street: row.street,
      city: row.city,
      province: row.province,
      postCode: row.post_code,
      country: row.country,
      photoId1: row.photo_id1,
      photoId1Title: row.photo_id1_title,
      photoId2: row.photo_id2,
      photoId2Title: row.photo_id2_title,
      whiteLabelSiteId: person.white_label_site_id,
      geoSiteName: person.geo_name,
      siteUrl: siteUrl(person),
    },
  ];
}

/** The person's own site first (its support URL, else its domain), then its geo-site's. */
function siteUrl(person: PersonRow): string | null {
  const own = person.white_label_site_id !== null;
  const ownUrl = own ? (person.wl_support_site_url ?? (person.wl_domain && `https://${person.wl_domain}`)) : null;
  return ownUrl ?? person.geo_support_site_url ?? (person.geo_domain && `https://${person.geo_domain}`) ?? null;
}

export interface KycSubmission {
  readonly userToken: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string;
  readonly isPhoneVerified: boolean;
  readonly street: string;
  readonly city: string;
  readonly province: string;
  readonly postCode: string;
  readonly country: string;
  readonly photoId1?: string | undefined;
  readonly photoId1Title?: string | undefined;
  readonly photoId2?: string | undefined;
  readonly photoId2Title?: string | undefined;
}

export const KYC_LIMITS = { street: 80, city: 40, province: 40, postCode: 16, photoId: 500, photoTitle: 100 } as const;

/**
 * Replaces the person's identity data with a new submission. Each submission
 * counts as one more round of the KYC flow (RedirectedToKYCTimes).
 */
export async function addKycInfo(ctx: RequestContext, submission: KycSubmission): Promise<KycScore[]> {
  const errors: ErrorEntry[] = [];
  const take = (check: { ok: true; value: string } | { ok: false; error: ErrorEntry }): string => {
    if (check.ok) return check.value;
    errors.push(check.error);
    return "";
  };
  const required = (field: string, value: string, max: number): string => {
    if (value.trim() === "") {
      errors.push({ name: "MissingValue", field, message: `${field} is required` });
      return "";
    }
    return take(checkText(field, value, max));
  };
  const optional = (field: string, value: string | undefined, max: number): string | null =>
    value === undefined || value.trim() === "" ? null : take(checkText(field, value, max));
  const record = {
    first_name: take(checkName("FirstName", submission.firstName)),
    last_name: take(checkName("LastName", submission.lastName)),
    // Kept as sent: it is the provider's record, not a login.
    email: checkEmail(submission.email).ok ? submission.email.trim() : take(checkEmail(submission.email)),
    phone: take(checkPhone(submission.phone)),
    is_phone_verified: submission.isPhoneVerified ? 1 : 0,
    street: required("Street", submission.street, KYC_LIMITS.street),
    city: required("City", submission.city, KYC_LIMITS.city),
    province: required("Province", submission.province, KYC_LIMITS.province),
    post_code: required("PostCode", submission.postCode, KYC_LIMITS.postCode),
    country: take(checkCountry(submission.country, "Country")),
    photo_id1: optional("PhotoId1", submission.photoId1, KYC_LIMITS.photoId),
    photo_id1_title: optional("PhotoId1Title", submission.photoId1Title, KYC_LIMITS.photoTitle),
    photo_id2: optional("PhotoId2", submission.photoId2, KYC_LIMITS.photoId),
    photo_id2_title: optional("PhotoId2Title", submission.photoId2Title, KYC_LIMITS.photoTitle),
  };
  if (errors.length > 0) throw new Refusal(errors);
  return withTransaction(ctx, async ({ tx }) => {
    const person = await kycPerson(tx, ctx, { userToken: submission.userToken });
    const now = ctx.clock.nowMs();
    await tx
      .insertInto("kyc_infos")
      .values({ person_id: person.id, ...record, updated_at: now })
      .onConflict((oc) => oc.column("person_id").doUpdateSet({ ...record, updated_at: now }))
      .execute();
    await ensureScore(tx, person.id, now);
    await tx
      .updateTable("kyc_scores")
      .set((eb) => ({ redirected_times: eb("redirected_times", "+", 1) }))
      .where("person_id", "=", person.id)
      .execute();
    return [(await scoreOf(tx, person.id)) as KycScore];
  });
}
