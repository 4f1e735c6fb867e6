import type { Generated } from "kysely";
import type { Role } from "../core/access.js";

/**
 * The tables as Kysely sees them. Times are integer milliseconds since the
 * epoch (UTC) and booleans are 0/1 integers, so one set of queries serves
 * SQLite and PostgreSQL alike.
 */
export interface Database {
  service_settings: ServiceSettingsTable;
  sites: SitesTable;
  persons: PersonsTable;
  platforms: PlatformsTable;
  access_keys: AccessKeysTable;
}

export interface ServiceSettingsTable {
  name: string;
  value: string;
}

export type SiteKind = "whitelabel" | "geo";

export interface SitesTable {
  id: Generated<number>;
  kind: SiteKind;
  name: string;
  domain: string | null;
  /** The geo-site a white-label site belongs to, if any. */
  geo_site_id: number | null;
  created_at: number;
}

export interface PersonsTable {
  id: Generated<number>;
  email: string;
  first_name: string;
  last_name: string;
  role: Role;
  white_label_site_id: number | null;
  /** Direct geo-site membership; members of a white-label site inherit the site's. */
  geo_site_id: number | null;
  alias: string | null;
  phone: string | null;
  is_phone_verified: Generated<number>;
  language: string | null;
  country_code: string | null;
  division_code: string | null;
  is_email_validated: Generated<number>;
  is_alive: Generated<number>;
  last_logged_in: number | null;
  last_ip: string | null;
  created_at: number;
}

export interface PlatformsTable {
  id: Generated<number>;
  name: string;
  white_label_site_id: number | null;
  created_at: number;
}

export interface AccessKeysTable {
  id: Generated<number>;
  person_id: number;
  /** SHA-256 of the key; the key itself is never stored. */
  key_hash: string;
  platform_id: number | null;
  comment: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}
