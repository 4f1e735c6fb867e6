/** Ids are distinct types so a PersonId is never passed where a SiteId belongs. */
declare const brand: unique symbol;
type Id<Name extends string> = number & { readonly [brand]: Name };

export type PersonId = Id<"PersonId">;
export type SiteId = Id<"SiteId">;
export type PlatformId = Id<"PlatformId">;

export const asPersonId = (n: number): PersonId => n as PersonId;
export const asSiteId = (n: number): SiteId => n as SiteId;
export const asPlatformId = (n: number): PlatformId => n as PlatformId;
