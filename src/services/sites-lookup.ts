import { fold } from "../core/search.js";
import type { Tx } from "../store/transaction.js";

/** Finding sites by the names clients use for them. */

export interface SiteRow {
  readonly id: number;
  readonly kind: "whitelabel" | "geo";
  readonly name: string;
  readonly domain: string | null;
  readonly geo_site_id: number | null;
}

export async function findSite(tx: Tx, id: number): Promise<SiteRow | undefined> {
  return tx
    .selectFrom("sites")
    .select(["id", "kind", "name", "domain", "geo_site_id"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/**
 * A geo-site named the way GeoSite parameters name it: by its name (the
 * GeoSIteId of GetGeoSites) or its domain, without regard to case. Geo-sites
 * are few (one per region), so they are compared here rather than in SQL.
 */
export async function findGeoSite(tx: Tx, geoSite: string): Promise<SiteRow | undefined> {
  const wanted = fold(geoSite.trim());
  const geoSites = await tx
    .selectFrom("sites")
    .select(["id", "kind", "name", "domain", "geo_site_id"])
    .where("kind", "=", "geo")
    .orderBy("id")
    .execute();
  return geoSites.find((site) => fold(site.name) === wanted || (site.domain !== null && fold(site.domain) === wanted));
}
