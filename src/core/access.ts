import { asSiteId, type PersonId, type PlatformId, type SiteId } from "./ids.js";

/**
 * Who may do what. Every operation declares a Permission; object-level checks
 * (is this customer on the caller's site?) use the scope functions below, so the
 * rules live in one place.
 */
export const ROLES = ["admin", "whitelabel-admin", "geo-admin", "person"] as const;
export type Role = (typeof ROLES)[number];

/** The Role string the API reports for each role (GetAccessKey.Role). */
export const ROLE_NAMES: Readonly<Record<Role, string>> = {
  admin: "ServiceAdmin",
  "whitelabel-admin": "WhiteLabelAdmin",
  "geo-admin": "GeoSiteAdmin",
  person: "Person",
};

/** The authenticated caller of an operation. */
export interface Caller {
  readonly personId: PersonId;
  readonly role: Role;
  /** The white-label site the caller belongs to, if any. */
  readonly whiteLabelSiteId: SiteId | null;
  /** The geo-site the caller belongs to: directly, or through its white-label site. */
  readonly geoSiteId: SiteId | null;
  readonly platformId: PlatformId | null;
}

/** Where a person belongs (or would belong): a white-label site, a geo-site, both, or neither. */
export interface Membership {
  readonly whiteLabelSiteId: SiteId | null;
  readonly geoSiteId: SiteId | null;
}

/** A membership from the site ids as stored (null: none). */
export const membership = (whiteLabelSiteId: number | null, geoSiteId: number | null): Membership => ({
  whiteLabelSiteId: whiteLabelSiteId === null ? null : asSiteId(whiteLabelSiteId),
  geoSiteId: geoSiteId === null ? null : asSiteId(geoSiteId),
});

/** The site membership of a person an operation acts on. */
export interface Member extends Membership {
  readonly personId: PersonId;
}

export type Permission =
  /** Any valid key. */
  | { readonly kind: "authenticated" }
  /** A valid key whose role is one of these. */
  | { readonly kind: "roles"; readonly roles: readonly Role[] };

export const anyCaller: Permission = { kind: "authenticated" };
export const onlyRoles = (...roles: Role[]): Permission => ({ kind: "roles", roles });

export function permits(permission: Permission, caller: Caller): boolean {
  return permission.kind === "authenticated" || permission.roles.includes(caller.role);
}

export const isServiceAdmin = (caller: Caller): boolean => caller.role === "admin";

/**
 * Whether the caller administers the members of a site: service admins
 * everyone, a white-label admin the members of its site, a geo-site admin the
 * members of its geo-site including the members of white-label sites inside it.
 */
export function administers(caller: Caller, member: Membership): boolean {
  switch (caller.role) {
    case "admin":
      return true;
    case "whitelabel-admin":
      return caller.whiteLabelSiteId !== null && member.whiteLabelSiteId === caller.whiteLabelSiteId;
    case "geo-admin":
      return caller.geoSiteId !== null && member.geoSiteId === caller.geoSiteId;
    case "person":
      return false;
  }
}

/** Whether the caller may see the person's private data: the person, or an admin of the person. */
export function mayReadPrivate(caller: Caller, member: Member): boolean {
  return caller.personId === member.personId || administers(caller, member);
}

export type SiteScope = { readonly ok: true; readonly siteId: SiteId } | { readonly ok: false };

/**
 * The white-label site an operation acts on: always the caller's own, except
 * that service admins may name another with WhiteLabelSiteId.
 */
export function whiteLabelScope(caller: Caller, requested: SiteId | undefined): SiteScope {
  if (requested !== undefined) {
    if (isServiceAdmin(caller) || requested === caller.whiteLabelSiteId) {
      return { ok: true, siteId: requested };
    }
    return { ok: false };
  }
  return caller.whiteLabelSiteId === null ? { ok: false } : { ok: true, siteId: caller.whiteLabelSiteId };
}
