import { dbOf, type RequestContext } from "./runtime.js";

export interface GeoSiteListing {
  readonly id: number;
  readonly name: string;
  readonly domain: string | null;
}

/** Every geo-site: a public directory of the regional sites. */
export async function listGeoSites(ctx: RequestContext): Promise<GeoSiteListing[]> {
  return dbOf(ctx)
    .selectFrom("sites")
    .select(["id", "name", "domain"])
    .where("kind", "=", "geo")
    .orderBy("id")
    .execute();
}
