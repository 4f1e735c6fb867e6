import { sql } from "kysely";
import { type Caller, mayReadPrivate, membership } from "../core/access.js";
import { defaultIcon } from "../core/avatar.js";
import { asPersonId } from "../core/ids.js";
import type { Tx } from "../store/transaction.js";
import type { ApprovalView } from "./geo-approvals.js";
import type { PersonRoles } from "./person-roles.js";

/**
 * A person as other people see them. Everyone sees the public part; the
 * person and the administrators entitled to them (their white-label site's,
 * their geo-site's, the service's) also see the private part.
 */
export interface PersonView {
  readonly id: number;
  readonly alias: string | null;
  readonly created: Date;
  readonly isAlive: boolean;
  readonly isManager: boolean;
  readonly isInvestor: boolean;
  /** Present only when asked for. */
  readonly icon: string | null;
  readonly private: PrivateProfile | null;
}

export interface PrivateProfile {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string | null;
  readonly isPhoneVerified: boolean;
  readonly language: string | null;
  readonly whiteLabelSiteId: number | null;
  readonly countryCode: string | null;
  readonly divisionCode: string | null;
  readonly lastLoggedIn: Date | null;
  readonly lastIp: string | null;
  readonly isEmailValidated: boolean;
  readonly geoSiteName: string | null;
  readonly isGeoSiteAdmin: boolean;
  readonly supportCompanyName: string | null;
  readonly supportSiteUrl: string | null;
  readonly supportEmail: string | null;
  /** Shown to administrators only: the person's own view does not need it. */
  readonly userToken: string | null;
  /** The geo-sites' live approvals of the person's brokerage accounts (geo-approvals.ts). */
  readonly approvedAccounts: readonly ApprovalView[];
}

/** Persons with their sites: `p` the person, `s` their white-label site, `g` their geo-site. */
export function personsWithSites(tx: Tx) {
  return tx
    .selectFrom("persons as p")
    .leftJoin("sites as s", "s.id", "p.white_label_site_id")
    .leftJoin("sites as g", (join) => join.on(sql`g.id`, "=", sql`coalesce(p.geo_site_id, s.geo_site_id)`))
    .selectAll("p")
    .select([
      "g.id as geo_id",
      "g.name as geo_name",
      "s.domain as wl_domain",
      "s.support_site_url as wl_support_site_url",
      "g.domain as geo_domain",
      "g.support_site_url as geo_support_site_url",
      sql<string | null>`coalesce(s.support_company_name, g.support_company_name)`.as("support_company_name"),
      sql<string | null>`coalesce(s.support_site_url, g.support_site_url)`.as("support_site_url"),
      sql<string | null>`coalesce(s.support_email, g.support_email)`.as("support_email"),
    ]);
}

export type PersonRow = Awaited<ReturnType<ReturnType<typeof personsWithSites>["executeTakeFirstOrThrow"]>>;

export function memberOf(row: PersonRow) {
  return { personId: asPersonId(row.id), ...membership(row.white_label_site_id, row.geo_id) };
}

export function viewPerson(
  caller: Caller,
  row: PersonRow & PersonRoles,
  includeIcon: boolean,
  approvals: ReadonlyMap<number, readonly ApprovalView[]> = new Map(),
): PersonView {
  const member = memberOf(row);
  const entitled = mayReadPrivate(caller, member);
  const administrator = entitled && caller.personId !== member.personId;
  return {
    id: row.id,
    alias: row.alias,
    created: new Date(row.created_at),
    isAlive: row.is_alive === 1,
    isManager: row.is_manager === 1,
    isInvestor: row.is_investor === 1,
    // Initials of the screen name; of the real name only for those who may see it.
    icon: includeIcon ? defaultIcon(row.id, row.alias ?? (entitled ? `${row.first_name} ${row.last_name}` : "")) : null,
    private: entitled
      ? {
          firstName: row.first_name,
          lastName: row.last_name,
          email: row.email,
          phone: row.phone,
          isPhoneVerified: row.is_phone_verified === 1,
          language: row.language,
          whiteLabelSiteId: row.white_label_site_id,
          countryCode: row.country_code,
          divisionCode: row.division_code,
          lastLoggedIn: row.last_logged_in === null ? null : new Date(row.last_logged_in),
          lastIp: row.last_ip,
          isEmailValidated: row.is_email_validated === 1,
          geoSiteName: row.geo_name,
          isGeoSiteAdmin: row.role === "geo-admin",
          supportCompanyName: row.support_company_name,
          supportSiteUrl: row.support_site_url,
          supportEmail: row.support_email,
          userToken: administrator ? row.user_token : null,
          approvedAccounts: approvals.get(row.id) ?? [],
        }
      : null,
  };
}
