import { refuse } from "../core/errors.js";
import { isE164 } from "../core/phone.js";
import { dbOf, type RequestContext } from "./runtime.js";

/** Whether someone already holds this number as a verified number. */
export async function verifiedPhoneExists(ctx: RequestContext, phone: string): Promise<boolean> {
  if (!isE164(phone)) {
    throw refuse("InvalidValue", {
      field: "Phone",
      message: "Phone must be in full international format: a plus, the country code and no zero after it",
    });
  }
  const row = await dbOf(ctx)
    .selectFrom("persons")
    .select("id")
    .where("phone", "=", phone)
    .where("is_phone_verified", "=", 1)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
