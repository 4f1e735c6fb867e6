import createClient, { type Client } from "openapi-fetch";
import type { components as GeneralComponents, paths as GeneralPaths } from "./generated/general.js";
import type { components as GeoSiteComponents, paths as GeoSitePaths } from "./generated/geo-site.js";
import type { components as WhiteLabelComponents, paths as WhiteLabelPaths } from "./generated/white-label.js";

/**
 * A typed client of strategy-hub's v4 API: openapi-fetch over the types
 * openapi-typescript generated from each server's OpenAPI document
 * (generated/, rewritten by `npm run client:generate`).
 */

export interface Connection {
  /** The server's address, e.g. http://127.0.0.1:8082 for the general server. */
  readonly baseUrl: string;
  /** An access key of the service, sent as `Authorization: Bearer <key>`. */
  readonly key: string;
}

/** A server's records and other named shapes, e.g. `Records<"GEN">["OrderStatus"]`. */
export type Records<Server extends "WL" | "GEN" | "GEO"> = {
  WL: WhiteLabelComponents["schemas"];
  GEN: GeneralComponents["schemas"];
  GEO: GeoSiteComponents["schemas"];
}[Server];

const options = ({ baseUrl, key }: Connection) => ({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

/** The white-label (WL) server's client. */
export const whiteLabelClient = (connection: Connection): Client<WhiteLabelPaths> =>
  createClient<WhiteLabelPaths>(options(connection));

/** The general (GEN) server's client. */
export const generalClient = (connection: Connection): Client<GeneralPaths> =>
  createClient<GeneralPaths>(options(connection));

/** The geo-site (GEO) server's client. */
export const geoSiteClient = (connection: Connection): Client<GeoSitePaths> =>
  createClient<GeoSitePaths>(options(connection));
