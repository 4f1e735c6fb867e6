import { randomBytes } from "node:crypto";
import type { Role } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { fold } from "../core/search.js";
import { uniqueViolation } from "../store/constraint.js";
import { withTransaction } from "../store/transaction.js";
import type { Runtime } from "./runtime.js";

export interface NewPerson {
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly role: Role;
  /** A white-label site or a geo-site; its kind says which membership this is. */
  readonly siteId?: number | undefined;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

/** The site kind each administrative role must belong to. */
const ROLE_SITE_KIND: Partial<Record<Role, "whitelabel" | "geo">> = {
  "whitelabel-admin": "whitelabel",
  "geo-admin": "geo",
};

export async function createPerson(runtime: Runtime, input: NewPerson): Promise<{ readonly personId: number }> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) {
    throw refuse("InvalidValue", { field: "Email", message: `Not an email address: ${input.email}` });
  }
  for (const [field, value] of [
    ["FirstName", input.firstName],
    ["LastName", input.lastName],
  ] as const) {
    // Measured as stored (trimmed), as AddProfile and UpdateProfile measure names.
    const length = value.trim().length;
    if (length < 1 || length > 40) {
      throw refuse("InvalidValue", { field, message: `${field} must be 1 to 40 characters` });
    }
  }
  const requiredKind = ROLE_SITE_KIND[input.role];
  if (requiredKind && input.siteId === undefined) {
    throw refuse("MissingValue", { field: "Site", message: `A ${input.role} belongs to a ${requiredKind} site` });
  }
  const created = withTransaction(runtime, async ({ tx }) => {
    let whiteLabelSiteId: number | null = null;
    let geoSiteId: number | null = null;
    if (input.siteId !== undefined) {
      const site = await tx.selectFrom("sites").select("kind").where("id", "=", input.siteId).executeTakeFirst();
      if (!site) throw refuse("NotFound", { field: "Site", message: `No site ${input.siteId}` });
      if (requiredKind && site.kind !== requiredKind) {
        throw refuse("InvalidValue", { field: "Site", message: `A ${input.role} belongs to a ${requiredKind} site` });
      }
      if (site.kind === "whitelabel") whiteLabelSiteId = input.siteId;
      else geoSiteId = input.siteId;
    }
    const taken = await tx.selectFrom("persons").select("id").where("email", "=", email).executeTakeFirst();
    if (taken) {
      throw refuse("AlreadyExists", {
        field: "Email",
        message: "That email is already registered",
        meta: { PersonId: taken.id },
      });
    }
    const row = await tx
      .insertInto("persons")
      .values({
        email,
        first_name: input.firstName.trim(),
        last_name: input.lastName.trim(),
        first_name_folded: fold(input.firstName.trim()),
        last_name_folded: fold(input.lastName.trim()),
        role: input.role,
        white_label_site_id: whiteLabelSiteId,
        geo_site_id: geoSiteId,
        user_token: newUserToken(),
        created_at: runtime.clock.nowMs(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { personId: row.id };
  });
  return created.catch((error: unknown) => {
    if (uniqueViolation(error)?.includes("email")) {
      throw refuse("AlreadyExists", { field: "Email", message: "That email is already registered" });
    }
    throw error;
  });
}

/** The private per-person token KYC operations name a person by. */
export const newUserToken = (): string => randomBytes(24).toString("base64url");
