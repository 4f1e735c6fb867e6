import { refuse } from "../core/errors.js";
import { checkEmail } from "../core/profile.js";
import type { SiteKind } from "../store/schema.js";
import { withTransaction } from "../store/transaction.js";
import type { Runtime } from "./runtime.js";

export interface NewSite {
  readonly kind: SiteKind;
  readonly name: string;
  readonly domain?: string | undefined;
  /** For a white-label site: the geo-site it belongs to. */
  readonly geoSiteId?: number | undefined;
  /** The site's support contacts, shown to its members in their profiles. */
  readonly supportCompanyName?: string | undefined;
  readonly supportSiteUrl?: string | undefined;
  readonly supportEmail?: string | undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export async function createSite(runtime: Runtime, input: NewSite): Promise<{ readonly id: number }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    throw refuse("InvalidValue", { field: "Name", message: "Name must be 1 to 100 characters" });
  }
  if (input.domain !== undefined && !DOMAIN.test(input.domain)) {
    throw refuse("InvalidValue", { field: "Domain", message: `Not a domain name: ${input.domain}` });
  }
  // Kept as members' profiles show them: without the spaces around them.
  const supportSiteUrl = input.supportSiteUrl?.trim();
  if (supportSiteUrl !== undefined && !isHttpUrl(supportSiteUrl)) {
    throw refuse("InvalidValue", { field: "SupportSiteURL", message: `Not an http(s) URL: ${input.supportSiteUrl}` });
  }
  if (input.supportEmail !== undefined && !checkEmail(input.supportEmail).ok) {
    throw refuse("InvalidValue", { field: "SupportEmail", message: `Not an email address: ${input.supportEmail}` });
  }
  const supportCompanyName = input.supportCompanyName?.trim();
  // A blank name is refused as a blank URL or email is: kept empty, it would hide the geo-site's in profiles.
  if (supportCompanyName !== undefined && (supportCompanyName.length < 1 || supportCompanyName.length > 100)) {
    throw refuse("InvalidValue", {
      field: "SupportCompanyName",
      message: "SupportCompanyName must be 1 to 100 characters",
    });
  }
  if (input.geoSiteId !== undefined && input.kind !== "whitelabel") {
    throw refuse("InvalidValue", { field: "GeoSiteId", message: "Only a white-label site belongs to a geo-site" });
  }
  return withTransaction(runtime, async ({ tx }) => {
    if (input.geoSiteId !== undefined) {
      const geo = await tx.selectFrom("sites").select("kind").where("id", "=", input.geoSiteId).executeTakeFirst();
      if (geo?.kind !== "geo") {
        throw refuse("NotFound", { field: "GeoSiteId", message: `No geo-site ${input.geoSiteId}` });
      }
    }
    const row = await tx
      .insertInto("sites")
      .values({
        kind: input.kind,
        name,
        domain: input.domain?.toLowerCase() ?? null,
        geo_site_id: input.geoSiteId ?? null,
        created_at: runtime.clock.nowMs(),
        support_company_name: supportCompanyName ?? null,
        support_site_url: supportSiteUrl ?? null,
        support_email: input.supportEmail?.trim().toLowerCase() ?? null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { id: row.id };
  });
}

export async function createPlatform(
  runtime: Runtime,
  input: { readonly name: string; readonly whiteLabelSiteId?: number | undefined },
): Promise<{ readonly id: number }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    throw refuse("InvalidValue", { field: "Name", message: "Name must be 1 to 100 characters" });
  }
  return withTransaction(runtime, async ({ tx }) => {
    if (input.whiteLabelSiteId !== undefined) {
      const site = await tx
        .selectFrom("sites")
        .select("kind")
        .where("id", "=", input.whiteLabelSiteId)
        .executeTakeFirst();
      if (site?.kind !== "whitelabel") {
        throw refuse("NotFound", {
          field: "WhiteLabelSiteId",
          message: `No white-label site ${input.whiteLabelSiteId}`,
        });
      }
    }
    const row = await tx
      .insertInto("platforms")
      .values({ name, white_label_site_id: input.whiteLabelSiteId ?? null, created_at: runtime.clock.nowMs() })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { id: row.id };
  });
}
